"""Pydantic validation errors, rephrased for people and placed at their line.

Each error's ``loc`` is walked twice in step: through the loaded YAML (a
``LineDict``/``LineList`` tree, for the line of the deepest key or item that
exists) and through the model types (to know which keys a mapping allows,
and to drop the discriminator tag pydantic inserts for asset types).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import date
from typing import Any, get_args, get_origin, get_type_hints

from typing_extensions import is_typeddict

from pydantic import BaseModel, Tag
from pydantic_core import ErrorDetails

from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.models import ASSET_TYPES, KEY_PATTERN, QUICK_CHECK, WHOLE_CHECK, ManifestSpec
from reconciler.vocabulary import ROLES
from reconciler.manifest.yaml_checks import written
from reconciler.manifest.yaml_lines import LineDict, LineList
from reconciler.text import printable, quoted, shortened


@dataclass(frozen=True)
class _Place:
    path: tuple[str | int, ...]  # components as the user wrote them (no union tags)
    line: int
    model: type[BaseModel] | None  # the model whose field the last component names
    keys: tuple[str, ...] = ()  # the keys the mapping holding the last component allows, as written


def problems_from_errors(errors: list[ErrorDetails], document: Any, file: str,
                         spec: type[BaseModel] = ManifestSpec) -> list[Problem]:
    """One readable problem per pydantic error of ``spec`` validation (a
    manifest file's ``ManifestSpec``, or an access review's files)."""
    problems = []
    for error in _whole_checks_only(errors):
        loc = error["loc"]
        if error["type"] == "union_tag_invalid":
            loc = (*loc, "type")  # point at the bad type itself, not at the asset
        place = _walk(loc, document, spec)
        line = place.line
        path, message = _phrase(error, place)
        text = f"{_dotted(path)}: {message}" if path else message
        problems.append(Problem(SourceLocation(file, line), text))
    return problems


def _whole_checks_only(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """``errors`` with each value that both of its checks refused (an email or a hostname: the
    quick pattern, then the whole check) told once, by the whole check, at the value's own place.

    A pair is the two labels at the end of one loc, the quick one's a text error (no mapping of
    the manifest holds text values, so a key spelled like a label is left alone)."""
    paired = {error["loc"][:-1] for error in errors
              if error["loc"][-1:] == (QUICK_CHECK,) and error["type"].startswith("string_")}
    kept = []
    for error in errors:
        loc = error["loc"]
        if loc[:-1] in paired and loc[-1:] == (QUICK_CHECK,):
            continue
        kept.append({**error, "loc": loc[:-1]} if loc[:-1] in paired and loc[-1:] == (WHOLE_CHECK,) else error)
    return kept


def _walk(loc: tuple[str | int, ...], document: Any, spec: type[BaseModel]) -> _Place:
    node: Any = document
    line = getattr(document, "line", 1)
    tp: Any = spec
    model: type[BaseModel] | None = None
    keys: tuple[str, ...] = ()
    path: list[str | int] = []
    for part in loc:
        if part == "[key]":
            path.append(part)
            continue
        tp = _unwrap(tp)
        tagged = _tagged_member(tp, part)
        if tagged is not None:
            tp = tagged  # pydantic names the asset type in loc; the YAML has no such level
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            model = tp
            keys = tuple(f.alias or name for name, f in tp.model_fields.items())
            field = tp.model_fields.get(str(part)) or next(
                (f for f in tp.model_fields.values() if f.alias == part), None)  # except: is except_
            tp = field.annotation if field else None
        elif is_typeddict(tp):  # an access entry: checked as a dict, not made a model (models.py)
            model, keys = None, tuple(tp.__annotations__)
            tp = get_type_hints(tp, include_extras=True).get(str(part))
        elif get_origin(tp) is dict:
            model, keys, tp = None, (), get_args(tp)[1]
        elif get_origin(tp) in (tuple, list):
            model, keys, tp = None, (), get_args(tp)[0]
        else:
            model, keys, tp = None, (), None
        path.append(part)
        if isinstance(node, LineDict) and not isinstance(part, int) and part not in node:
            # pydantic spells a non-text key (null, true) as text in loc
            part = next((k for k in node if str(k) == part), part)
        if isinstance(node, LineDict) and part in node:
            line, node = node.key_lines[part], node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and part < len(node):
            line, node = node.item_lines[part], node[part]
        else:
            node = None
    return _Place(tuple(path), line, model, keys)


def _unwrap(tp: Any) -> Any:
    """Strip Annotated and ``X | None`` down to the type that validates the value."""
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            tp = get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _tagged_member(tp: Any, part: str | int) -> Any:
    if get_origin(tp) not in (typing.Union, types.UnionType):
        return None
    for member in get_args(tp):
        # A union told apart by a function (a team: a list of emails, or {directoryGroup:}): its Tag names the member.
        if get_origin(member) is typing.Annotated and any(isinstance(m, Tag) and m.tag == part
                                                          for m in member.__metadata__):
            return member
        if isinstance(member, type) and issubclass(member, BaseModel) and "type" in member.model_fields:
            if part in get_args(member.model_fields["type"].annotation):
                return member
    return None


def _phrase(error: ErrorDetails, place: _Place) -> tuple[tuple[str | int, ...], str]:
    """The path to show and the message; a few kinds name their parent instead."""
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    path = place.path
    last = path[-1] if path else None
    if kind == "missing":
        return path[:-1], f"missing required key {_shown(last)}"
    if kind == "extra_forbidden":
        return path[:-1], f"unknown key {_shown(last)}; allowed keys: {', '.join(place.keys)}"
    if last == "[key]":
        return path[:-2], _key_message(path, kind, ctx, value)
    if kind == "invalid_key":  # a key of a model's own mapping that is not text (true:, 3:)
        return path[:-1], f"key {_shown(value)} must be text"
    if kind == "union_tag_not_found":
        return path, f"missing required key 'type'; use one of {', '.join(ASSET_TYPES)}"
    if kind == "union_tag_invalid":
        return path, f"{_shown(ctx.get('tag'))} is not an asset type; use one of {', '.join(ASSET_TYPES)}"
    if kind == "literal_error" and last in ("role", "maxRoleOutside"):  # a role, whatever the key that holds it
        return path, f"{_shown(value)} is not a role; use one of {', '.join(ROLES)}"
    if path == ("version",) and kind in ("literal_error", "manifest"):
        return (), f"version must be 1 (the only manifest format this tool reads), got {_shown(value)}"
    if kind == "literal_error" and last == "all" and "match" in path:
        return path, (f"{_shown(value)} is not a criterion: all: true matches every workspace of the company; "
                      "to match fewer, leave all out and give accounts, templates or names")
    if kind == "literal_error":
        # pydantic spells the allowed values as Python does (True, 'a'); a manifest is YAML.
        expected = str(ctx.get("expected")).replace("True", "true").replace("False", "false")
        return path, f"{_shown(value)} is not allowed; use one of {expected}"
    if kind in ("manifest", "manifest_id"):
        return path, printable(error["msg"])
    return path, _type_message(kind, value, error["msg"])


_ID_KINDS = {"sections": "a section id", "pages": "a page id", "tasks": "a task id"}


def _key_message(path: tuple[str | int, ...], kind: str, ctx: dict[str, Any], key_value: Any) -> str:
    """Why a mapping key was refused, in terms of what that mapping's keys are.

    The key is shown from the error's input, not its ``loc``: pydantic writes
    a key true as 1 there."""
    key = ctx["value"] if kind == "manifest_id" else _shown(key_value)
    if kind == "manifest" and "what" in ctx:  # an email key (directory.deactivated), refused with its reason
        return f"key {ctx['value']} is not {ctx['what']}" + (f"; {ctx['why']}" if ctx.get("why") else "")
    if kind == "string_type":
        return f"key {key} must be text"
    if ctx.get("pattern") == KEY_PATTERN:
        return f"key {key} must be lower-case letters, digits and '-', starting with a letter or digit"
    # Section, page and task keys are ids of the service (ServiceId).
    what = _ID_KINDS.get(str(path[-3]) if len(path) >= 3 else "", "an id")
    why = f": {ctx['why']}" if kind == "manifest_id" else ""
    return f"key {key} must be {what} as the service shows it (like sec_41 or Task_1){why}"


_EXPECTED = {
    "string_type": "text",
    "bool_type": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "tuple_type": "a list",
    "list_type": "a list",
}


def _type_message(kind: str, value: Any, fallback: str) -> str:
    if kind in _EXPECTED:
        hint = ""
        if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
            hint = f"; quote it (\"{shortened(str(value))}\") so it is read as text"
        return f"expected {_EXPECTED[kind]}, got {_describe(value)}{hint}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_pattern_mismatch":
        return f"{_shown(value)} must not be empty or contain spaces"
    if kind in ("greater_than", "greater_than_equal"):
        return f"{_shown(value)} is too small; {fallback[0].lower()}{fallback[1:]}"
    return f"{fallback[0].lower()}{fallback[1:]}" if fallback else kind


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"the number {shortened(str(value))}"
    if isinstance(value, date):
        return f"the date {value.isoformat()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {_shown(value)}"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A value or key as a message quotes it: text between quotes, anything
    else as YAML writes it (``true``, ``null``, ``2026-12-01``); one line, at
    most 80 characters."""
    return quoted(value) if isinstance(value, str) else written(value)


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        shown = printable(shortened(str(part)))
        out += f"[{shown}]" if isinstance(part, int) else (f".{shown}" if out else shown)
    return out

