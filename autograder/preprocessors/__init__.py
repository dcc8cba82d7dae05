"""nbgrader preprocessors of our own: the guarded, sandboxed executor, the step that makes a
graded notebook inert, and the hidden tests' removal from feedback."""
