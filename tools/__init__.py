"""Build tooling for the course: notebook sync/execution, nbgrader pipeline, fake students."""
