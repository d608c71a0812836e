"""Safety is a property of the plan, checked before any call (octoDNS's
``raise_if_unsafe``): a plan that removes more access than allowed is refused
as a whole, so nobody loses access to a typo in a manifest."""

from __future__ import annotations

from reconciler.errors import PlanRefused
from reconciler.plan.model import Plan


def check_max_removals(plan: Plan, max_removals: int | None) -> None:
    if max_removals is None:
        return
    removals = plan.removals
    if len(removals) > max_removals:
        listed = ", ".join(f"{address}: {e.kind} {e.key}" for address, e in removals[:10])
        more = f" and {len(removals) - 10} more" if len(removals) > 10 else ""
        raise PlanRefused(
            f"The plan removes {len(removals)} access entries ({listed}{more}), more than "
            f"--max-removals {max_removals} allows. Nothing was changed. If these removals "
            f"are intended, raise --max-removals.",
            plan,
        )
