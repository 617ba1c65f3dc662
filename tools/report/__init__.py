"""The instructor's class report (`make report`): scores, failures, known mistakes, timings
and similar submissions (similarity).
"""
