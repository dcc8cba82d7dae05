# Thin entry points; the documentation (docs/, built by `make docs`) explains each. `make lab`
# and `make test` are all a newcomer needs: both create the environment first when it is
# missing or stale.

# What is installed: the course, the tools its tests use and the documentation's builder.
INSTALL := .[test,cluster,docs]
include student-edition/environment.mk

# Options for pytest, e.g. make test PYTEST_ARGS="-k answers"
PYTEST_ARGS ?=
# Options for the grader, e.g. make grade GRADE_ARGS="--course ~/course --student alice --force"
GRADE_ARGS ?=

# Options for the export, e.g. make export EXPORT_ARGS="--course ~/course --assignment 01-inplace-basics"
EXPORT_ARGS ?=

# The student edition's language: en, ko, zh or ja (not LANG, which is the locale)
EDITION ?= en

# Submissions for the benchmark, e.g. make bench BENCH_N=80
BENCH_N ?= 40

.PHONY: env lab test test-fast release translations grade export bench student docs site clean

# The environment's scripts go first on PATH: nbgrader's formgrader runs `alembic` by name.
lab: env
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_ARGS)

# Python's bytecode cache on, whatever the environment says (some CI images and this
# project's build machine set PYTHONDONTWRITEBYTECODE): without it every process of a test
# run (each grading worker, nbgrader command, pytest worker; not the grading kernels, which
# never write one) compiles the grader and pytest rewrites every test module again, seconds
# each. The caches are gitignored.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

# Two test processes (pytest-xdist), a group of tests sharing a costly fixture in one of them
# (tests/conftest.py); PYTEST_ARGS="-n 0" runs a single one.
test: env
	$(BIN)/python -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The inner loop: every test not marked slow (no kernels, no nbgrader runs, no browser) and
# a sample of the answer suite (each function's first right and wrong answer), in two
# processes (pytest-xdist).
test-fast: env
	$(BIN)/python -m pytest tests -m "not slow and not answers" -n 2 --dist loadgroup $(PYTEST_ARGS)

grade: env
	$(BIN)/python -m autograder grade $(GRADE_ARGS)

export: env
	$(BIN)/python -m autograder export $(EXPORT_ARGS)

bench: env
	$(BIN)/python -m autograder.grading.bench --n $(BENCH_N)

release: env
	$(BIN)/python -m autograder.release

# The translations' catalogues (translations/LANG/), merged with the English as it is now: a
# changed paragraph's translation is marked fuzzy, a new one arrives empty
# (translations/README.md says what to do next).
translations: env
	$(BIN)/python -m autograder.translation update

# What students get instead of this repository: dist/student/ and dist/student.zip, without
# solutions, hidden tests or the grader (stops while release/ is stale). EDITION=ko (zh, ja)
# writes the edition in that language, dist/student-ko/ (stops while a translation is unfinished).
student: env
	$(BIN)/python -m autograder.edition --edition $(EDITION)

# The documentation site, docs/_build/html/ (to read it: python3 -m http.server -d docs/_build/html),
# with its configuration reference written from the code first. Jupyter Book would download
# its theme from GitHub: docs/theme/ is that theme's source, built here with npm once per
# machine and version of it (1.2 GB of node_modules, minutes), in the user's cache as pip
# keeps its wheels, so that a fresh clone reuses it; docs/theme/README.md says how it was made.
# (Remix's route files have brackets and parentheses in their names: read with find -print0.)
THEME_HASH := $(shell find docs/theme -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
THEME_BUILT := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pytorch-inplace-course/myst-theme-$(THEME_HASH)

# MyST takes a folder (not a link) for a template and copies its public/ whole: a copy of
# what is built, but for the packages the theme's server runs with. $(1): where.
define lay_theme
	rm -rf "$(1)"
	mkdir -p "$(1)"
	cd "$(THEME_BUILT)" && find . -mindepth 1 -maxdepth 1 ! -name node_modules -exec cp -R {} "$(abspath $(1))/" \;
	ln -s "$(THEME_BUILT)/node_modules" "$(1)/node_modules"
endef

docs: env $(THEME_BUILT)/.built
	$(call lay_theme,docs/_build/theme)
	$(BIN)/python -m autograder.config_reference docs/configuration.md
	cd docs && ../$(BIN)/jupyter-book build --html --strict --ci

# The lectures on the web, dist/site/ (to read it: python3 -m http.server -d dist/site): every
# lecture with its outputs in English and in each translation, built by Jupyter Book with the
# documentation's theme (stops while a translation is unfinished). SITE_LAB_URL: where the
# pages' "open in JupyterLab" links go, a notebook's path in the course appended;
# SITE_LANGUAGES: which languages (e.g. "en ko"); SITE_INTO: where the site goes (replaced
# whole, if make site wrote it: a folder with other files is refused, and so is the repository).
SITE_LAB_URL ?= http://localhost:8888/lab/tree/
SITE_LANGUAGES ?= en ko zh ja
SITE_INTO ?= dist/site
SITE_PROJECT ?= build/site
site: env $(THEME_BUILT)/.built
	$(BIN)/python -m autograder.website project --into "$(SITE_PROJECT)" --lab-url "$(SITE_LAB_URL)" --theme _theme $(foreach language,$(SITE_LANGUAGES),--language $(language))
	$(call lay_theme,$(SITE_PROJECT)/_theme)
	cd "$(SITE_PROJECT)" && "$(abspath $(BIN))/jupyter-book" build --html --strict --ci
	$(BIN)/python -m autograder.website publish --built "$(SITE_PROJECT)/_build/html" --into "$(SITE_INTO)" $(foreach language,$(SITE_LANGUAGES),--language $(language))

# npm's cache may answer without asking the registry again: the lock pins every package and
# its checksum. Built aside and renamed into place, so that an interrupted build is no build.
$(THEME_BUILT)/.built:
	@command -v npm >/dev/null || { echo "make docs and make site need Node.js 18 or later and npm (apt-get install nodejs npm)" >&2; exit 1; }
	rm -rf $(THEME_BUILT) $(THEME_BUILT).partial
	mkdir -p $(THEME_BUILT).partial
	cp -R docs/theme/. $(THEME_BUILT).partial
	cd $(THEME_BUILT).partial && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && npm run build
	touch $(THEME_BUILT).partial/.built
	mv $(THEME_BUILT).partial $(THEME_BUILT)

clean:
	rm -rf $(VENV) .pytest_cache docs/_build
