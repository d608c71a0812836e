"""Safety is a property of the plan, checked before any call (octoDNS's
``raise_if_unsafe``): a plan that removes more access than allowed is refused
as a whole, so nobody loses access to a typo in a manifest.

A removal is one person or domain losing all access to one workspace, read
from the plan's ``effects`` (``plan/differences.py``): an entry of a group's
list removed from five workspaces is five removals, and so is one of a list
the service shares with workspaces connected by hand."""

from __future__ import annotations

from reconciler.errors import PlanRefused
from reconciler.plan.differences import removals
from reconciler.plan.model import Plan
from reconciler.text import plural
from reconciler.gcpause import gc_paused


@gc_paused()
def check_max_removals(plan: Plan, max_removals: int | None) -> None:
    if max_removals is None:
        return
    found = removals(plan)
    if len(found) > max_removals:
        listed = ", ".join(d.text() for d in found[:10])
        more = f" and {len(found) - 10} more" if len(found) > 10 else ""
        raise PlanRefused(
            f"The plan removes {plural(len(found), 'access entry', 'access entries')}, each a person or domain losing all access to one "
            f"workspace ({listed}{more}), more than --max-removals {max_removals} allows. Nothing was changed. If "
            "these removals are intended, raise --max-removals.",
            plan,
        )
