"""Scripts that recompute every number the course quotes.

Each ``*_check.py`` script collects :class:`checks.claims.Claim` records and prints them
as a table (or JSON with ``--json``); it exits non-zero when any claim fails. Tests import
the same functions, and ``tests/test_claims.py`` ties each claim to the sentence of the
notebook that quotes it.
"""
