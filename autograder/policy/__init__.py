"""The static scan of student code, before any of it runs: what a course allows (its
configuration and what its own notebooks use), the rules, and the names they read."""
