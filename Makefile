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
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(SYSSTAMP): packaging/install-system-deps.sh | $(STAMP)
	bash packaging/install-system-deps.sh
	touch $(SYSSTAMP)

# The library with no Qt installed at all (napari's habit): proves core never needs it.
$(HSTAMP): pyproject.toml
	test -x $(HEADLESS)/bin/python || $(PYTHON) -m venv $(HEADLESS)
	$(HEADLESS)/bin/python -m pip install -q --upgrade pip
	$(HEADLESS)/bin/python -m pip install -q --no-deps -e .
	$(HEADLESS)/bin/python -m pip install -q "peewee>=4.5,<5" "APScheduler>=3.11,<4" platformdirs filelock pytest pytest-timeout hypothesis
	touch $(HSTAMP)

run: $(STAMP) $(SYSSTAMP)
	env -u QT_QPA_PLATFORM $(PY) -m ora_desktop $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check ora_desktop tests
	$(VENV)/bin/lint-imports

test-headless: $(HSTAMP)
	$(HEADLESS)/bin/python -m pytest -q -p no:qt -m "not slow" tests/unit

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
