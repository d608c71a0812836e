"""Each rule is written once (issue 37, item 2): every user imports the one definition.

Each test imports the one place and asserts that the name each user module
works with *is* that definition, so a copy written back into a user fails
here; a scan of the source for a second definition follows where one helps.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reconciler"


def _defined(name: str) -> list[str]:
    """Every module of reconciler that defines a class or function called ``name`` (at any depth)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name for node in ast.walk(tree)):
            found.append(path.relative_to(ROOT).as_posix())
    return found


# -- the frozen base of the tool's pydantic values ---------------------------------------------------------------

def test_every_value_model_stands_on_the_one_frozen_base() -> None:
    import reconciler.company.audit
    import reconciler.company.model
    import reconciler.company.who
    import reconciler.models
    import reconciler.plan.model
    import reconciler.report.model
    import reconciler.review.evidence
    import reconciler.review.status

    for user in (reconciler.plan.model, reconciler.report.model, reconciler.company.model, reconciler.company.who,
                 reconciler.company.audit, reconciler.review.status, reconciler.review.evidence):
        assert user.Frozen is reconciler.models.Frozen, user.__name__
    assert issubclass(reconciler.plan.model.Plan, reconciler.models.Frozen)
    assert issubclass(reconciler.review.evidence.Evidence, reconciler.models.Frozen)


def test_no_module_but_models_defines_a_frozen_base() -> None:
    assert _defined("Frozen") + _defined("_Frozen") == ["reconciler/models.py"]
