# Two entry points: `make demo` (the main job on the bundled samples) and `make test`.
# Both set everything up from nothing in a virtualenv in .venv: the demo plugman alone (its
# runtime dependencies), the tests plugman and its test tools.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup setup-apt demo test test-quick lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q plugman  # .pyc even where PYTHONDONTWRITEBYTECODE is set
	touch $@

setup: $(BIN)/.installed

# What `make demo` runs: plugman and its runtime dependencies only, installed by uv (the one on
# PATH, else uv from PyPI into .venv through the system's pip), ~10 s against ~40 s for a venv
# with pip and pip's install; a venv with pip and pip when uv cannot be had. (`make setup` adds
# pip and the test tools to the same .venv.)
$(BIN)/.runtime: pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	@uv=$$(command -v uv || { $(PYTHON) -m pip --python $(BIN)/python install --quiet uv \
	  >/dev/null 2>&1 && echo $(BIN)/uv; }); \
	if [ -n "$$uv" ] && $$uv pip install --quiet --python $(BIN)/python -e .; then \
	  echo "installed plugman into $(VENV) with $$uv"; \
	else \
	  $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet -e .; \
	fi
	$(BIN)/python -m compileall -q plugman  # as below
	touch $@

# Debian packages some tests run for real: dbus (dbus-run-session) and gnome-keyring (a Secret
# Service keychain, for the secret store's keyring path; without them that one test is skipped,
# saying so); docker-registry (CNCF distribution 2.8, the OCI registry the oci:// tests run on
# 127.0.0.1), apache2-utils (htpasswd, its Basic-auth users) and openssl (the certificate and
# signatures of its Bearer token service): without those the OCI tests fail, saying to run this;
# zsh and fish, whose own completion engines tests/cli/test_completion.py drives; redis-server,
# haproxy and nginx, the gateway fleet tests' shared store and load balancers (started on 127.0.0.1).
# Installed only where missing; as root, or through sudo. `make test` runs it first.
APT_PACKAGES := dbus gnome-keyring docker-registry apache2-utils openssl zsh fish redis-server haproxy nginx-light
APT_COMMANDS := dbus-run-session gnome-keyring-daemon docker-registry htpasswd openssl zsh fish redis-server haproxy nginx
setup-apt:
	@if (for c in $(APT_COMMANDS); do command -v $$c >/dev/null || exit 1; done); then \
	  echo "apt packages present: $(APT_PACKAGES)"; \
	else \
	  sudo=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi

demo: $(BIN)/.runtime
	@home=$$(mktemp -d); project=$$home/project; mkdir -p $$project; \
	export HOME=$$home PLUGMAN_HOME=$$home/plugman PLUGMAN_MANAGED_DIR=$$home/managed; \
	p() { echo "+ plugman $$*"; $(BIN)/plugman --project $$project "$$@"; }; \
	p --version && \
	p validate sample-plugins && \
	p marketplace add $(CURDIR)/sample-plugins && \
	p search hook && \
	p agents add gemini codex --scope project && \
	p install guardrails writing-skills --scope project && \
	p install notes-server && \
	p list && \
	(cd $$project && find .gemini .codex .agents -type f | sort) && \
	cat $$project/plugman.toml $$project/plugman.lock && \
	p config resolve && \
	p export --target claude-code --write && \
	p doctor && \
	p uninstall guardrails writing-skills --scope project && \
	p uninstall notes-server && \
	p agents remove gemini codex --scope project && \
	p list && \
	p export --target claude-code --remove; \
	status=$$?; rm -rf "$$home"; exit $$status

lint: setup
	$(BIN)/ruff check plugman tests bench sample-plugins examples
	$(BIN)/ruff format --check plugman tests bench sample-plugins examples
	$(BIN)/mypy
	# the example extension as its users check it: in its own folder, plugman an installed,
	# typed package (py.typed), its own config (strict)
	cd examples/plugman-example && $(CURDIR)/$(BIN)/mypy plugman_example tests

test: setup-apt lint
	$(BIN)/python -m pytest -n 2 -q --durations=25

# The development lane: everything but the hardening suites (fault injection, fuzzing) and the
# tests marked slow (real agents from npm, Claude Code as an oracle), each property on a few
# examples (the "quick" hypothesis profile, tests/conftest.py). CI runs `make test`.
QUICK := -m "not slow" --hypothesis-profile=quick \
  --ignore=tests/fuzz --ignore=tests/integration/test_faults.py
test-quick: setup
	$(BIN)/python -m pytest -n 2 -q $(QUICK) $(ARGS)

BASE ?= HEAD~1
ALSO ?=
bench: setup  # every benchmark, quick mode, one table beside BASE's tree (default HEAD~1; BASE=REV; ALSO='--also REV[:PYTHON]')
	$(BIN)/python bench/table.py --quick --base '$(BASE)' $(ALSO)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
