# Thin entry points; the README explains each. `make lab` and `make test` are all a
# newcomer needs: both create the environment first when it is missing or stale.

# What pip installs: the course and the tools its tests use.
INSTALL := .[test,cluster]
include student-edition/environment.mk

# Options for pytest, e.g. make test PYTEST_ARGS="-k answers"
PYTEST_ARGS ?=
# Options for the grader, e.g. make grade GRADE_ARGS="--course ~/course --student alice --force"
GRADE_ARGS ?=

# Options for the export, e.g. make export EXPORT_ARGS="--course ~/course --assignment 01-inplace-basics"
EXPORT_ARGS ?=

# Submissions for the benchmark, e.g. make bench BENCH_N=80
BENCH_N ?= 40

.PHONY: env lab test test-fast release grade export bench student clean

# The environment's scripts go first on PATH: nbgrader's formgrader runs `alembic` by name.
lab: env
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_ARGS)

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The inner loop: every test not marked slow (no kernels, no nbgrader runs, no browser), in
# two processes (pytest-xdist).
test-fast: env
	$(BIN)/python -m pytest tests -m "not slow" -n 2 --dist loadgroup $(PYTEST_ARGS)

grade: env
	$(BIN)/python -m autograder grade $(GRADE_ARGS)

export: env
	$(BIN)/python -m autograder export $(EXPORT_ARGS)

bench: env
	$(BIN)/python -m autograder.grading.bench --n $(BENCH_N)

release: env
	$(BIN)/python -m autograder.release

# What students get instead of this repository: dist/student/ and dist/student.zip, without
# solutions, hidden tests or the grader (stops while release/ is stale).
student: env
	$(BIN)/python -m autograder.edition

clean:
	rm -rf $(VENV) .pytest_cache
