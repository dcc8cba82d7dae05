"""The checks the assignments' test cells call, as the student edition of the PyTorch
in-place operations course ships them: the course's own ``checks`` module, nothing of its
grader."""
