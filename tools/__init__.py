"""The course's machinery, by part: ``build`` (notebooks, release, editions, handout), ``grading``
(one grading engine, the sandbox, the exchange), ``live_grading`` (the class's live service),
``site`` (the course site and the pages students receive), ``report`` (the instructor's class
report) and ``meta`` (checks of the checks), on a ground floor of two modules every part uses:
``env`` (paths) and ``nbcore`` (the cell vocabulary). README.md, "Layout", lists each part."""
