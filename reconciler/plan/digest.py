"""What a review approves of a plan, and its digest.

The projection of a plan that apply acts on (``approved``) is what the
saved-plan check compares (``reconciler.plan.saved``) and what the plan's
digest is the sha256 of (``plan_digest``): one definition, so an approval by
digest and an approval by saved file approve the same thing.

Imports nothing of the plan's model (the model's ``plan_digest`` field calls
this module): any pydantic model with the plan's fields will do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter

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
    so an approval of one plan cannot be spent on another.

    The canonical JSON is ``json.dumps(approved(plan), sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8; it is fed
    to sha256 a field and a list item at a time (``canonical_chunks``), never
    built whole: at 10,000 changes the whole text and its copy of the plan
    doubled the memory of the plan (issue 40)."""
    import hashlib

    digest = hashlib.sha256()
    for chunk in canonical_chunks(plan):
        digest.update(chunk.encode("utf-8"))
    return digest.hexdigest()


def canonical_chunks(plan: BaseModel) -> Iterator[str]:
    """The canonical JSON of :func:`approved`, in pieces whose concatenation
    is exactly ``json.dumps(approved(plan), sort_keys=True, separators=(",",
    ":"), ensure_ascii=False)``: the fields in sorted order, a list's items
    one at a time (each dumped on its own: JSON with sorted keys and no spaces
    is the concatenation of its parts)."""
    yield "{"
    for number, name in enumerate(sorted(APPROVED_FIELDS)):
        yield ("," if number else "") + _dumps(name) + ":"
        value = getattr(plan, name)
        if isinstance(value, (list, tuple)):
            yield "["
            for index, item in enumerate(value):
                yield ("," if index else "") + _dumps(_without_display(_json_value(item)))
            yield "]"
        else:
            yield _dumps(_without_display(_json_value(value)))
    yield "}"


def _json_value(value: Any) -> Any:
    """``value`` as ``model_dump(mode="json")`` gives it inside the plan."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return TypeAdapter(type(value)).dump_python(value, mode="json")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_display(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_display(v) for k, v in value.items() if k not in DISPLAY_ONLY}
    if isinstance(value, list):
        return [_without_display(v) for v in value]
    return value
