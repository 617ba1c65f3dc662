"""nbgrader typed from the repository root uses the course's configuration (course/)."""

c = get_config()  # noqa: F821
load_subconfig("course/nbgrader_config.py")  # noqa: F821
