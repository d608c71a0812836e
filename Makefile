# Every target makes its own virtual environment, so it works where pip
# refuses system-wide installs (PEP 668).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install clean mutation

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
# .ci/ensure-valgrind installs valgrind, which bench.plan_command --instructions runs under.
# Each does nothing when what it installs is there already.
test: install
	.ci/ensure-postgres
	.ci/ensure-chromium
	.ci/ensure-valgrind
	$(BIN)/ruff check reconciler tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

# Mutation testing of the access core, on demand and not in CI (it takes long): docs/testing.md,
# "Mutation testing". [tool.mutmut] in pyproject.toml says which files and which tests; of
# reconciler/state/postgres.py only what the PostgreSQL lock (state/postgres_lock.py) calls is in scope. mutmut
# keeps its work in mutants/; .ci/mutation-run continues a stopped run and reruns only what is not
# killed (MUTATION_FRESH=--fresh runs everything again); the score is printed at the end.
MUTATION_SCOPE := 'reconciler.plan.access.*' 'reconciler.plan.effects.*' 'reconciler.plan.safety.*' \
	'reconciler.plan.saved.*' 'reconciler.apply.run.*' 'reconciler.apply.proof.*' \
	'reconciler.apply.writes.*' 'reconciler.apply.creations.*' 'reconciler.apply.recording.*' 'reconciler.apply.stops.*' 'reconciler.review.start.*' 'reconciler.review.close.*' \
	'reconciler.state.journal.*' 'reconciler.state.lock.*' 'reconciler.state.postgres_lock.*' \
	'reconciler.state.postgres.x?PostgresBackend?lock__mutmut_*' \
	'reconciler.state.postgres.x?PostgresBackend?_lock_keys__mutmut_*' \
	'reconciler.state.postgres.x?PostgresBackend?_holder__mutmut_*' \
	'reconciler.state.postgres.x?PostgresBackend?_holder_session__mutmut_*' \
	'reconciler.state.postgres.x?PostgresBackend?_tables__mutmut_*'
MUTATION_CHILDREN ?= 2
MUTATION_FRESH ?=

mutation: install
	.ci/ensure-postgres
	$(BIN)/pip install --quiet -e '.[mutation]'
	$(BIN)/python .ci/mutation-run $(MUTATION_FRESH) --children $(MUTATION_CHILDREN) $(MUTATION_SCOPE)
	$(BIN)/python .ci/mutation-score $(MUTATION_SCOPE)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find reconciler bench tests -name __pycache__ -prune -exec rm -rf {} +
