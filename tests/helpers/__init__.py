"""What the tests share: the course's files as tests read them, submissions built from
answers, attack fixtures, nbgrader's own scenarios, a cluster, a lab server, the report's HTML."""
