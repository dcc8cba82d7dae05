# The Python environment, as the course's Makefile and the student edition's both build it
# (this file is the course's student-edition/environment.mk, copied into the edition).
# The including Makefile sets INSTALL, what is installed editable ('.[test]' or '.').
# The environment is rebuilt only when pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
# The course is pinned to Python 3.11 (pyproject.toml's requires-python): said up front,
# not as a pip resolution error halfway through the install.
NEEDS_PY311 = import sys; sys.exit(None if sys.version_info[:2] == (3, 11) else "this course needs Python 3.11, but $(1) is Python " + sys.version.split()[0] + ": install 3.11 and run make PYTHON=python3.11 ... (or use conda: environment.yml)")
# On Linux, PyPI's torch is the CUDA build (gigabytes); TORCH=cpu takes PyTorch's CPU-only
# wheels instead, e.g. make lab TORCH=cpu (macOS and Windows wheels are CPU-only already).
TORCH ?=
PIP_INDEX := $(if $(filter cpu,$(TORCH)),--extra-index-url https://download.pytorch.org/whl/cpu)
# pip installs uv into the environment, and uv installs the rest: the same packages as pip
# (pyproject.toml's pins; compared on this machine), weighed across every index as pip weighs
# them (the best version wherever it is), compiled to bytecode as pip compiles them (the
# kernels' sandbox cannot write it). 87 s with pip on two cores, 44 s with uv. uv reads no
# pip configuration: the settings that decide where packages are found (find-links,
# index-url, extra-index-url: PIP_* variables, or the global settings in pip's files; a
# machine's local torch build, say) are passed on, others (no-index, cert, constraint) are
# not. The command is not echoed: an index's address may hold a password.
PIP_SETTING = $(or $(PIP_$(1)),$(shell $(PYTHON) -m pip config get global.$(2) 2>/dev/null))
PIP_SOURCES = $(foreach place,$(call PIP_SETTING,FIND_LINKS,find-links),--find-links $(place)) \
	$(foreach index,$(call PIP_SETTING,EXTRA_INDEX_URL,extra-index-url),--extra-index-url $(index)) \
	$(foreach index,$(call PIP_SETTING,INDEX_URL,index-url),--index-url $(index))
# Options for `jupyter lab`, e.g. make lab LAB_ARGS="--no-browser --port 8899"
LAB_ARGS ?=
# Jupyter refuses to run as root unless told to (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

env: $(INSTALLED)

$(INSTALLED): pyproject.toml
	@if test -x $(BIN)/python && ! $(BIN)/python -c '$(call NEEDS_PY311,$(VENV))' 2>/dev/null; then \
		echo "$(VENV) was made with another Python: making it again"; rm -rf $(VENV); fi
	@test -x $(BIN)/python || $(PYTHON) -c '$(call NEEDS_PY311,$(PYTHON))'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'uv>=0.13,<0.14'
	@echo "uv pip install -e '$(INSTALL)' (with pip's package sources)"
	@$(BIN)/uv pip install --python $(BIN)/python --quiet --compile-bytecode --index-strategy unsafe-best-match \
		$(PIP_SOURCES) $(PIP_INDEX) -e '$(INSTALL)'
	touch $@
