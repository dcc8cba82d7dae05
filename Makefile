# Thin entry points; the README explains each. `make lab` and `make test` are all a
# newcomer needs: both create the environment first when it is missing or stale.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall only when the declared dependencies change (the package itself is editable).
INSTALLED := $(VENV)/.installed

# Options for `jupyter lab`, e.g. make lab LAB_ARGS="--no-browser --port 8899"
LAB_ARGS ?=
# Jupyter refuses to run as root unless told to (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# Options for pytest, e.g. make test PYTEST_ARGS="-k answers"
PYTEST_ARGS ?=
# Options for the grader, e.g. make grade GRADE_ARGS="--course ~/course --student alice --force"
GRADE_ARGS ?=

# Submissions for the benchmark, e.g. make bench BENCH_N=80
BENCH_N ?= 40

.PHONY: env lab test test-fast release grade bench clean

env: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The environment's scripts go first on PATH: nbgrader's formgrader runs `alembic` by name.
lab: env
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_ARGS)

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The inner loop: every test not marked slow (no kernels, no nbgrader runs, no browser).
test-fast: env
	$(BIN)/python -m pytest tests -m "not slow" $(PYTEST_ARGS)

grade: env
	$(BIN)/python -m autograder grade $(GRADE_ARGS)

bench: env
	$(BIN)/python -m autograder.grading.bench --n $(BENCH_N)

release: env
	$(BIN)/python -m autograder.release

clean:
	rm -rf $(VENV) .pytest_cache
