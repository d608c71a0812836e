# Every target makes its own virtual environment, so it works where pip
# refuses system-wide installs (PEP 668).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install clean

$(BIN)/reconciler: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/reconciler

demo: install
	$(BIN)/reconciler demo

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
