# Thin entry points; the README explains each. `make lab` and `make test` are all a
# newcomer needs: both create the environment first when it is missing or stale.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall only when the declared dependencies change (the package itself is editable).
INSTALLED := $(VENV)/.installed
# The course is pinned to Python 3.11 (pyproject.toml's requires-python): said up front,
# not as a pip resolution error halfway through the install.
NEEDS_PY311 = import sys; sys.exit(None if sys.version_info[:2] == (3, 11) else "this course needs Python 3.11, but $(1) is Python " + sys.version.split()[0] + ": install 3.11 and run make PYTHON=python3.11 ... (or use conda: environment.yml)")
# On Linux, PyPI's torch is the CUDA build (gigabytes); TORCH=cpu takes PyTorch's CPU-only
# wheels instead, e.g. make lab TORCH=cpu (macOS and Windows wheels are CPU-only already).
TORCH ?=
PIP_INDEX := $(if $(filter cpu,$(TORCH)),--extra-index-url https://download.pytorch.org/whl/cpu)

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

.PHONY: env lab test test-fast release grade bench student clean

env: $(INSTALLED)

$(INSTALLED): pyproject.toml
	@if test -x $(BIN)/python && ! $(BIN)/python -c '$(call NEEDS_PY311,$(VENV))' 2>/dev/null; then \
		echo "$(VENV) was made with another Python: making it again"; rm -rf $(VENV); fi
	@test -x $(BIN)/python || $(PYTHON) -c '$(call NEEDS_PY311,$(PYTHON))'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_INDEX) -e '.[test]'
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

# What students get instead of this repository: dist/student/ and dist/student.zip, without
# solutions, hidden tests or the grader (stops while release/ is stale).
student: env
	$(BIN)/python -m autograder.edition

clean:
	rm -rf $(VENV) .pytest_cache
