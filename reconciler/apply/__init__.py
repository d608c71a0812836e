"""Apply: carry out a plan against the service and record each change in the state.

``run`` orders and executes the changes (``apply_plan``), ``assets`` the
calls of one asset change, ``progress`` shows how far it got, ``audit``
logs every HTTP call of an apply.

May import: plan/, state, api/, live, owned_files, text, errors (the map
in docs/design.md; tests/test_import_graph.py enforces it).  Nothing here
knows click or the emulator.
"""

from reconciler.apply.recording import ApplyResult
from reconciler.apply.run import apply_plan

__all__ = ["ApplyResult", "apply_plan"]
