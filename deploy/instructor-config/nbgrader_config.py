"""nbgrader for the instructor's server on the course's JupyterHub (on its JUPYTER_CONFIG_PATH).

The course's own configuration (``<course>/nbgrader_config.py``: exchange from TD_EXCHANGE,
release-aware checksums, scrubbed feedback) with the course root the hub names in
TD_COURSE_DIR, so the formgrader, collect, autograde and feedback act on that course
whatever the server's working directory.
"""

import os

c = get_config()  # noqa: F821

course = os.environ.get("TD_COURSE_DIR")
if course:
    load_subconfig(os.path.join(course, "nbgrader_config.py"))  # noqa: F821
    c.CourseDirectory.root = course
