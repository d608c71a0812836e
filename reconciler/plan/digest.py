"""What a review approves of a plan, and its digest.

The projection of a plan that apply acts on (``approved``) is what the
saved-plan check compares (``reconciler.plan.saved``) and what the plan's
digest is the sha256 of (``plan_digest``): one definition, so an approval by
digest and an approval by saved file approve the same thing.

Imports nothing of the plan's model (the model's ``plan_digest`` field calls
this module): any pydantic model with the plan's fields will do.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# Everything apply acts on or records: the changes it sends (their calls,
# bodies, order and dependencies), the lists it records as managed, the
# addresses it forgets, what the plan was made for, and the access each
# workspace is predicted to have after it (what the reviewer approved, and
# what apply checks the service against).  Display-only fields
# that legitimately move with the day or the command line (warnings about
# expiry dates, the cost under this run's --rate-limit, the unmanaged list of
# --show-unmanaged) are not part of the approval.
APPROVED_FIELDS = ("changes", "managed", "forgotten", "unchanged", "addresses", "targets", "reassert", "summary",
                   "adopted", "effects", "moved")
# Said for people, never acted on: where a manifest line is (its path depends
# on the directory plan ran in) and why a change is made.
DISPLAY_ONLY = frozenset({"location", "reason"})


def approved(plan: BaseModel) -> dict[str, Any]:
    """The part of a plan that a review approves, as plain JSON values."""
    found: dict[str, Any] = _without_display(plan.model_dump(mode="json", include=set(APPROVED_FIELDS)))
    return found


def plan_digest(plan: BaseModel) -> str:
    """The sha256 (64 hex digits) of the canonical JSON of everything apply
    acts on (:func:`approved`): what a review approves, bound to its content,
    so an approval of one plan cannot be spent on another."""
    import hashlib
    import json

    canonical = json.dumps(approved(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _without_display(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_display(v) for k, v in value.items() if k not in DISPLAY_ONLY}
    if isinstance(value, list):
        return [_without_display(v) for v in value]
    return value
