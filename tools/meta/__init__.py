"""Checks of the course's own checks: code counts, the mutation corpus (mutants), delegates
to the library (delegates) and the verdicts a student sees at home (home_verdicts).
"""
