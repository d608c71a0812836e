"""What a review approves of a plan, and its digest.

The projection of a plan that apply acts on (``approved``) is what the
saved-plan check compares (``reconciler.plan.saved``) and what the plan's
digest is the sha256 of (``plan_digest``): one definition, so an approval by
digest and an approval by saved file approve the same thing.

Imports nothing of the plan's model (the model's ``plan_digest`` field calls
this module): any pydantic model with the plan's fields will do.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

from reconciler.gcpause import gc_paused

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
# Not approved: where a manifest line is and why a change is made (said for
# people, never acted on), and where this machine keeps an asset's bytes (an
# AssetChange's absolute ``file``: apply reads the bytes from its own checkout
# and checks them against the approved ``digest``; the path inside the
# manifests is the approved ``file_label``). Each depends on the directory
# plan ran in, and a plan approved in a pull request's checkout is applied
# from another one.
DISPLAY_ONLY = frozenset({"location", "reason", "file"})

# The canonical JSON's encoder: keys sorted, no spaces, UTF-8 as it is.
_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def approved(plan: BaseModel) -> dict[str, Any]:
    """The part of a plan that a review approves, as plain JSON values (its fields in the plan's order)."""
    return {name: _approved_value(getattr(plan, name)) for name in type(plan).model_fields if name in APPROVED_FIELDS}


@gc_paused()  # a pydantic dump of each change: acyclic values by the hundred thousand (gcpause.py)
def plan_digest(plan: BaseModel) -> str:
    """The sha256 (64 hex digits) of the canonical JSON of everything apply
    acts on (:func:`approved`): what a review approves, bound to its content,
    so an approval of one plan cannot be spent on another.

    The canonical JSON is ``json.dumps(approved(plan), sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8; it is fed
    to sha256 a field and a list item at a time (``canonical_chunks``), never
    built whole: at 10,000 changes the whole text and its copy of the plan
    doubled the memory of the plan (issue 40)."""
    digest = hashlib.sha256()
    for chunk in canonical_chunks(plan):
        digest.update(chunk.encode("utf-8"))
    return digest.hexdigest()


def canonical_chunks(plan: BaseModel) -> Iterator[str]:
    """The canonical JSON of :func:`approved`, in pieces whose concatenation
    is exactly ``json.dumps(approved(plan), sort_keys=True, separators=(",",
    ":"), ensure_ascii=False)``: the fields in sorted order, a list's items
    one at a time (each dumped on its own: JSON with sorted keys and no spaces
    is the concatenation of its parts).

    Each item is serialised once, by pydantic, with the display-only fields
    left out as it goes (``display_exclusion``), then encoded: no copy of the
    plan without them is made (issue 40)."""
    known: dict[int, str] = {}  # the pieces an item writes once per digest (``canonical_json``), by id
    yield "{"
    for number, name in enumerate(sorted(APPROVED_FIELDS)):
        yield ("," if number else "") + _encode(name) + ":"
        value = getattr(plan, name)
        if isinstance(value, (list, tuple)):
            yield "["
            for index, item in enumerate(value):
                if index:
                    yield ","
                # An item that writes its own canonical JSON (the effects: half the digest's CPU at 10,000
                # changes, spent on views the workspaces of one list share) does; the tests hold it to this.
                fast = getattr(item, "canonical_json", None)
                yield fast(known) if fast is not None else _encode(_approved_value(item))
            yield "]"
        else:
            yield _encode(_approved_value(value))
    yield "}"


def _approved_value(value: Any) -> Any:
    """``value`` as ``model_dump(mode="json")`` gives it inside the plan, without its display-only fields at
    any depth."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude=display_exclusion(type(value)))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(item, BaseModel) for item in value):
        return [_approved_value(item) for item in value]
    return _without_display(TypeAdapter(type(value)).dump_python(value, mode="json"))


def _without_display(value: Any) -> Any:
    """For a value of no declared type (none of the plan's fields): the display-only keys left out at any depth."""
    if isinstance(value, dict):
        return {k: _without_display(v) for k, v in value.items() if k not in DISPLAY_ONLY}
    if isinstance(value, list):
        return [_without_display(v) for v in value]
    return value


# pydantic's ``exclude``: field name (or dict key) -> True (left out) or the exclusion of its value;
# ``__all__``: of every item of a list or every value of a dict.
Exclusion = dict[Any, Any]
# Keys in the data of a dict (emails, asset fields): a display-only one would be left out like a field.
_DATA_KEYS: Exclusion = dict.fromkeys(DISPLAY_ONLY, True)


@cache
def display_exclusion(model: type[BaseModel]) -> Exclusion | None:
    """The display-only fields of ``model`` at every depth, read from its declared fields' types (a field,
    a dict key, in a list's items, in any model of a union), as pydantic's ``exclude`` takes them; None when
    it holds none. A type it cannot read is refused rather than guessed (TypeError)."""
    found: Exclusion = {}
    for name, info in model.model_fields.items():
        inner = True if name in DISPLAY_ONLY else _exclusion(info.annotation)
        if inner is not None:
            found[name] = inner
    for name, computed in model.model_computed_fields.items():
        inner = True if name in DISPLAY_ONLY else _exclusion(computed.return_type)
        if inner is not None:
            found[name] = inner
    return found or None


_PLAIN = (str, int, float, bool, type(None))


def _exclusion(annotation: Any) -> Exclusion | None:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _exclusion(args[0])
    if origin is typing.Literal:
        return None
    if origin in (typing.Union, types.UnionType):
        return _merged([_exclusion(arg) for arg in args])
    if origin in (tuple, list, set, frozenset, Sequence):
        inner = _merged([_exclusion(arg) for arg in args if arg is not Ellipsis])
        return {"__all__": inner} if inner is not None else None
    if origin in (dict, Mapping):
        inner = _exclusion(args[1]) if len(args) == 2 else None
        return {**_DATA_KEYS, "__all__": inner} if inner is not None else dict(_DATA_KEYS)
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return display_exclusion(annotation)
        if dataclasses.is_dataclass(annotation):
            hints = typing.get_type_hints(annotation)
            found = {f.name: True if f.name in DISPLAY_ONLY else _exclusion(hints[f.name])
                     for f in dataclasses.fields(annotation)}
            return {k: v for k, v in found.items() if v is not None} or None
        if issubclass(annotation, (*_PLAIN, enum.Enum, datetime.date)):
            return None
    raise TypeError(f"the plan digest cannot tell the display-only fields of {annotation!r}")


def _merged(found: Sequence[Exclusion | None]) -> Exclusion | None:
    """One exclusion for a value that may be any of several types (a union): every field any of them leaves out."""
    merged: Exclusion = {}
    for exclusion in found:
        for key, inner in (exclusion or {}).items():
            before = merged.get(key)
            merged[key] = (True if before is True or inner is True else
                           inner if before is None else _merged([before, inner]))
    return merged or None
