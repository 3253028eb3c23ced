# Two commands: `make run` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HEADLESS := .venv-headless
HSTAMP := $(HEADLESS)/.installed
SYSSTAMP := $(VENV)/.system-deps
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run test lint test-headless bench screenshots demo clean

$(STAMP): pyproject.toml
	PYTHON=$(PYTHON) bash packaging/bootstrap-venv.sh $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(SYSSTAMP): packaging/install-system-deps.sh | $(STAMP)
	bash packaging/install-system-deps.sh
	touch $(SYSSTAMP)

# The library with no Qt installed at all (napari's habit): proves core never needs it.
# The package itself is not installed there; pytest puts the checkout on sys.path.
$(HSTAMP): pyproject.toml
	PYTHON=$(PYTHON) bash packaging/bootstrap-venv.sh $(HEADLESS)
	$(HEADLESS)/bin/python -m pip install -q --upgrade pip
	$(HEADLESS)/bin/python -m pip install -q "peewee>=4.5,<5" "APScheduler>=3.11,<4" platformdirs filelock "psycopg[binary]>=3.2" numpy "wordllama>=0.4,<0.5" "numkong>=7.8,<8" pytest pytest-timeout hypothesis
	touch $(HSTAMP)

run: $(STAMP) $(SYSSTAMP)
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ "$$(uname)" = Linux ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open."; \
	  echo "  On a headless machine try: xvfb-run -a make run   or the command line: $(VENV)/bin/ora-desktop --help"; \
	  $(VENV)/bin/ora-desktop sites; exit 1; \
	fi
	env -u QT_QPA_PLATFORM $(PY) -m ora_desktop $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check ora_desktop tests
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

test: $(STAMP) $(SYSSTAMP) lint test-headless
	$(PY) -m pytest tests --ignore=tests/benchmarks

bench: $(STAMP) $(SYSSTAMP)
	$(PY) -m tests.benchmarks $(ARGS)

screenshots: $(STAMP) $(SYSSTAMP)
	env -u QT_QPA_PLATFORM xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) -m tests.screenshots

demo: $(STAMP)
	$(PY) -m ora_desktop demo $(ARGS)

clean:
	rm -rf $(VENV) $(HEADLESS) .pytest_cache .ruff_cache build *.egg-info
