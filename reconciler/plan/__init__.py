"""Planning: the pure diff of (Desired, Live, State) into a Plan, and its renderers.

Pure: no I/O.  May import manifest/, state, live, vocabulary, gcpause, text,
errors; never api/ (the map in docs/design.md; tests/test_import_graph.py).
"""

from reconciler.plan.model import AccessChange, AccessSnapshot, Action, ApiCall, EntryChange, Plan
from reconciler.plan.access import patch_order
from reconciler.plan.planner import make_plan
from reconciler.plan.render_markdown import render_markdown
from reconciler.plan.render_text import render_text
from reconciler.plan.safety import check_max_removals

__all__ = [
    "AccessChange",
    "AccessSnapshot",
    "Action",
    "ApiCall",
    "EntryChange",
    "Plan",
    "check_max_removals",
    "make_plan",
    "patch_order",
    "render_markdown",
    "render_text",
]
