"""The course's build: notebook sources and their pairs (nbtool), executed solutions (render),
the nbgrader pipeline and the fake class (pipeline, fake_students), the student and grading
editions of td_lib (student_edition), the release's checks (release_lint), the equation
index, the students' handout (handout) with its hand-in command (handin) and the README's
tested blocks (readme_blocks).
"""
