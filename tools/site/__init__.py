"""The course site (pages: `make site`) and the pages students receive from grading: the
feedback page's template, filters and nbgrader configuration (feedback_page) and the
cleaning of student HTML (sanitize).
"""
