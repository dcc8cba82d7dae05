"""Running student code safely: a bubblewrap sandbox around each grading kernel, resource
limits inside it, and a guard that keeps the tests' own machinery intact."""
