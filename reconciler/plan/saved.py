"""A saved plan is an approval of a result, never a program.

``plan --out`` writes a plan for review; ``apply --plan FILE`` must then do
exactly what was reviewed, and nothing else.  The file passes through hands
the tool cannot vouch for (a CI artifact of a pull-request run executes the
pull request's code), so apply never executes it: it recomputes the plan from
the manifests, the live service and the state, and applies that recomputed
plan only when the saved one is the same, field for field, in everything
apply acts on.  A forged entry, a changed role or workspace id, a dropped
revocation: each makes the two differ, and nothing is sent.

Two checks, in order, so the message says what happened:

- ``refuse_stale``: the inputs moved since the plan was made (manifests,
  state, live access, another service).  The usual case, and an honest one.
- ``refuse_altered``: the inputs are the same, yet the changes are not the
  ones they give.  The file was edited, or made by another version of the
  tool: either way it is not what these inputs approve.

The saved plan's file format (``format_saved_plan``, ``parse_saved_plan``)
lives here too, beside the checks of what it holds.

Pure: no I/O.  Values quoted from the saved file are untrusted and pass
through :func:`reconciler.text.quoted`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from reconciler.errors import ApplyError, ConfigError
from reconciler.plan.digest import approved
from reconciler.plan.model import Plan
from reconciler.text import parse_json, printable, quoted


def refuse_stale(saved: Plan, fresh: Plan, plan_label: str) -> None:
    """Raise ``ApplyError`` when the plan's inputs moved since it was made."""
    if saved.service != fresh.service:
        raise ApplyError(
            f"The saved plan {plan_label} was made against {printable(saved.service) or 'another service'}, not "
            f"{fresh.service}, so nothing was changed. Plan against this service and review that plan."
        )
    reasons = []
    if saved.manifest_digest != fresh.manifest_digest:
        reasons.append("The manifests changed since it was made.")
    if saved.state_lineage != fresh.state_lineage:
        reasons.append(_lineage_reason(saved.state_lineage, fresh.state_lineage))
    elif saved.state_serial != fresh.state_serial:
        reasons.append(f"The state moved on since it was made (serial {saved.state_serial}, now {fresh.state_serial}).")
    if saved.live_fingerprint != fresh.live_fingerprint:
        reasons.append("Access in the live service changed since it was made.")
    reasons += _directory_reasons(saved, fresh)
    if reasons:
        raise ApplyError(
            f"The saved plan {plan_label} is stale, so nothing was changed. {' '.join(reasons)} "
            "Run 'reconciler plan --out' again and review the new plan."
        )


def _directory_reasons(saved: Plan, fresh: Plan) -> list[str]:
    """A plan made with ``--directory live`` is bound to the live directory it read, as to the live service."""
    if (saved.directory is None) != (fresh.directory is None):
        made, now = ("live", "committed") if saved.directory is not None else ("committed", "live")
        return [f"It was made with --directory {made}, and this apply reads the {now} directory "
                f"(give apply --directory {made}, or plan again)."]
    if saved.directory is not None and fresh.directory is not None \
            and saved.directory.fingerprint != fresh.directory.fingerprint:
        return ["The live directory changed since it was made."]
    return []


def _lineage_reason(saved: str, fresh: str) -> str:
    if not saved:
        return "It was made without a state file; one exists now."
    if not fresh:
        return "It was made with a state file, and there is none now."
    return "It was made against a different state file (the lineage differs)."


def refuse_altered(saved: Plan, fresh: Plan, plan_label: str) -> None:
    """Raise ``ApplyError`` unless ``saved`` is, in every approved field,
    the plan ``fresh`` that these inputs give now."""
    difference = first_difference(approved(saved), approved(fresh))
    if difference is None:
        return
    raise ApplyError(
        f"The saved plan {plan_label} is not the plan that the manifests, the live service and the state give "
        f"now, although they have not changed since it was made, so nothing was changed. {difference} "
        "The file was edited after reconciler plan --out wrote it, or was made by another version of reconciler. "
        "A saved plan is only ever an approval of the plan these inputs give; run 'reconciler plan --out' "
        "again and review the new plan."
    )


def first_difference(saved: Any, fresh: Any, path: str = "") -> str | None:
    """The first place where two JSON values differ, said for a person, or
    None when they are equal."""
    if saved == fresh:
        return None
    if isinstance(saved, Mapping) and isinstance(fresh, Mapping):
        for key in [*fresh.keys(), *(k for k in saved.keys() if k not in fresh)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in saved:
                return f"At {printable(where)} the saved plan has nothing; these inputs give {_value(fresh[key])}."
            if key not in fresh:
                return f"At {printable(where)} the saved plan has {_value(saved[key])}; these inputs give nothing."
            found = first_difference(saved[key], fresh[key], where)
            if found is not None:
                return found
    if _is_list(saved) and _is_list(fresh):
        for index in range(max(len(saved), len(fresh))):
            where = f"{path}[{index}]{_address_of(saved, fresh, index)}"
            if index >= len(saved):
                return f"At {where} the saved plan has no more items; these inputs give {_value(fresh[index])}."
            if index >= len(fresh):
                return f"At {where} the saved plan has {_value(saved[index])}; these inputs give no more items."
            found = first_difference(saved[index], fresh[index], where)
            if found is not None:
                return found
    return f"At {printable(path)} the saved plan has {_value(saved)}; these inputs give {_value(fresh)}."


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _address_of(saved: Sequence[Any], fresh: Sequence[Any], index: int) -> str:
    """`` (address)`` of the change at ``index``, from the recomputed plan
    when it has one there: the reader should see an address we vouch for."""
    for side in (fresh, saved):
        if index < len(side) and isinstance(side[index], Mapping):
            address = side[index].get("address") or side[index].get("key")
            if isinstance(address, str):
                return f" ({quoted(address)})"
    return ""


def _value(value: Any) -> str:
    if isinstance(value, str):
        return quoted(value)
    import json

    return quoted(json.dumps(value, sort_keys=True, ensure_ascii=False), limit=120)


# The saved plan's file format: a JSON document of this kind, the manifest
# path the plan was made from (POSIX, relative to the plan file's directory
# unless absolute) and the plan.  Bytes in, bytes out: reading and writing the
# file (owned, atomic, size-capped) is the commands' business.
SAVED_PLAN_KIND = "reconciler-plan"


class SavedPlanFile(NamedTuple):
    """What a saved plan's file holds."""

    plan: Plan
    manifest_path: PurePosixPath  # as stored: relative to the plan file's directory unless absolute


def format_saved_plan(plan: Plan, manifest_path: PurePosixPath) -> bytes:
    """The bytes of a saved plan's file."""
    import json

    doc = {"kind": SAVED_PLAN_KIND, "manifest_path": manifest_path.as_posix(), "plan": plan.model_dump(mode="json")}
    return (json.dumps(doc, indent=2) + "\n").encode("utf-8")


def parse_saved_plan(data: bytes, plan_label: str) -> SavedPlanFile:
    """The plan and manifest path in ``data``; a ``ConfigError`` naming
    ``plan_label`` when ``data`` is not a saved plan's file."""

    from pydantic import ValidationError

    try:
        doc = parse_json(data)
        if doc.get("kind") != SAVED_PLAN_KIND:
            raise ValueError("not a saved reconciler plan")
        return SavedPlanFile(Plan.model_validate(doc["plan"]), PurePosixPath(doc["manifest_path"]))
    except (ValueError, KeyError, AttributeError, TypeError, ValidationError) as exc:
        raise not_a_saved_plan(plan_label, exc) from exc


def not_a_saved_plan(plan_label: str, reason: object) -> ConfigError:
    """The error for a file that is not a saved plan."""
    return ConfigError(f"{plan_label} is not a plan saved by reconciler plan --out: {reason}.")
