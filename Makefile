# Every target makes its own virtual environment, so it works where pip
# refuses system-wide installs (PEP 668).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install clean

# An editable install leaves no bytecode: compileall makes it now, so the
# first commands do not pay for it (nor every command, where
# PYTHONDONTWRITEBYTECODE is set).
$(BIN)/reconciler: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q reconciler
	touch $@

install: $(BIN)/reconciler

demo: install
	$(BIN)/reconciler demo

# The linters first (seconds), then the suite: a lint error fails fast.
# .ci/ensure-postgres installs PostgreSQL's server binaries when missing: the
# suite starts a throwaway cluster of its own for the PostgreSQL state tests.
# .ci/ensure-chromium installs the browser the report's page is tested in.
# Both do nothing when what they install is there already.
test: install
	.ci/ensure-postgres
	.ci/ensure-chromium
	$(BIN)/ruff check reconciler tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find reconciler bench tests -name __pycache__ -prune -exec rm -rf {} +
