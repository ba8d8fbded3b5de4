# Two entry points: `make demo` (the main job on the bundled samples) and `make test`.
# Both set everything up from nothing: a virtualenv in .venv with plugman and its test tools.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test lint clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q plugman  # .pyc even where PYTHONDONTWRITEBYTECODE is set
	touch $@

setup: $(BIN)/.installed

demo: setup
	@home=$$(mktemp -d); export PLUGMAN_HOME=$$home PLUGMAN_MANAGED_DIR=$$home/managed; \
	set -x; \
	$(BIN)/plugman --version; \
	$(BIN)/plugman paths; \
	$(BIN)/plugman validate sample-plugins; \
	$(BIN)/plugman validate sample-plugins/invalid/path-escape sample-plugins/invalid/url-without-type; \
	set +x; rm -rf "$$home"

lint: setup
	$(BIN)/ruff check plugman tests bench sample-plugins
	$(BIN)/ruff format --check plugman tests bench sample-plugins
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -n 2 -q

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
