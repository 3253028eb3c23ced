# Two commands: `make run` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Every install takes the tested versions from constraints.txt.
PIP := -m pip install -q -c constraints.txt
RSTAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test
DSTAMP := $(VENV)/.installed-dist
HEADLESS := .venv-headless
HSTAMP := $(HEADLESS)/.installed
SYS := $(VENV)/.system-deps
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run test lint test-headless docs dist bench screenshots demo clean

$(VENV)/bin/python:
	PYTHON=$(PYTHON) bash packaging/bootstrap-venv.sh $(VENV)
	$(PY) -m pip install -q --upgrade pip

# What running needs: the package with every face (no test tools).
$(RSTAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PY) $(PIP) -e '.[all]'
	touch $@

$(STAMP): $(RSTAMP)
	$(PY) $(PIP) -e '.[test]'
	touch $@

$(DSTAMP): $(RSTAMP)
	$(PY) $(PIP) -e '.[dist]'
	touch $@

# System packages by purpose (packaging/install-system-deps.sh): running warns, never fails.
$(SYS)-%: packaging/install-system-deps.sh | $(VENV)/bin/python
	bash packaging/install-system-deps.sh $*
	touch $@

# The library with no Qt installed at all (napari's habit): proves core never needs it. The
# package goes in with the extras a headless machine uses, straight from pyproject.toml.
$(HSTAMP): pyproject.toml constraints.txt
	PYTHON=$(PYTHON) bash packaging/bootstrap-venv.sh $(HEADLESS)
	$(HEADLESS)/bin/python -m pip install -q --upgrade pip
	$(HEADLESS)/bin/python $(PIP) -e '.[mcp,sync,meaning,test-core]'
	touch $@

run: $(RSTAMP) $(SYS)-run
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ "$$(uname)" = Linux ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open."; \
	  echo "  On a headless machine try: xvfb-run -a make run   or the command line: $(VENV)/bin/ora-desktop --help"; \
	  $(VENV)/bin/ora-desktop sites; exit 1; \
	fi
	env -u QT_QPA_PLATFORM $(VENV)/bin/ora-desktop $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check ora_desktop tests packaging
	$(VENV)/bin/lint-imports

# The Qt-free suite runs under a fixed hash seed (3: the one that once broke the demo), then the
# modules whose output could follow set/dict order of strings (demo data, query parsing, tags,
# ranking) under more seeds, so an order that depends on PYTHONHASHSEED cannot creep back in.
# The main run below keeps Python's random seed. (About two extra minutes.)
HASH_SEED ?= 3
HASH_SEEDS ?= 0 1
HASH_MODULES := tests/unit/test_demo.py tests/unit/test_search_query.py tests/unit/test_search_tags.py \
	tests/unit/test_seed_queries.py tests/unit/test_context.py tests/unit/test_search_questions.py

test-headless: $(HSTAMP)
	cd $(CURDIR) && PYTHONHASHSEED=$(HASH_SEED) PYTHONPATH=$(CURDIR) $(HEADLESS)/bin/python -m pytest -q -m "not slow" tests/unit
	cd $(CURDIR) && for seed in $(HASH_SEEDS); do echo "PYTHONHASHSEED=$$seed:"; \
	  PYTHONHASHSEED=$$seed PYTHONPATH=$(CURDIR) $(HEADLESS)/bin/python -m pytest -q -m "not slow" \
	  -p no:cacheprovider $(HASH_MODULES) || exit 1; done

# The documentation site (MkDocs), with every internal link checked.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

# The wheel, the sdist, the PyInstaller folder as a tarball and a .deb of it, all in dist/.
dist: $(DSTAMP) $(SYS)-dist
	PY=$(PY) bash packaging/build-dist.sh

# The packaging tests (tests/packaging) install what dist built: make test builds it first.
test: $(STAMP) $(DSTAMP) $(SYS)-test lint test-headless docs dist
	$(PY) -m pytest tests --ignore=tests/benchmarks

bench: $(STAMP) $(SYS)-test
	$(PY) -m tests.benchmarks $(ARGS)

screenshots: $(STAMP) $(SYS)-test
	env -u QT_QPA_PLATFORM xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) -m tests.screenshots

demo: $(RSTAMP)
	$(VENV)/bin/ora-desktop demo $(ARGS)

clean:
	rm -rf $(VENV) $(HEADLESS) .pytest_cache .ruff_cache build dist *.egg-info
