"""One canonical layout for manifest files (``reconciler fmt``), comments kept.

The file is read and written again by ruamel.yaml in round-trip mode, chosen
on purpose over PyYAML (which the loader uses): PyYAML drops every comment
and the order of keys' styles, so a file written back by it loses what the
people who keep the manifests wrote for each other.  ruamel.yaml keeps
comments, key order, flow or block style and quotes, and re-emits the rest
in one layout:

- mappings indented by 2 spaces, a list's dash indented by 2 under its key
  and its items by 4 (``users:`` / ``  - {email: ..., role: ...}``), as the
  examples are written;
- a flow collection (``{email: a@acme.com, role: owner}``) on one line,
  however it was wrapped; spacing inside it normalised;
- no line is wrapped however long (a name or a url stays on its line);
- quotes as written (``"9811"`` stays a string), trailing spaces dropped,
  one newline at the end; a comment stays on its line, at its column.

Keys keep the order they were written in: a comment written above a key is
attached by ruamel.yaml to the node before it, so moving keys would move
comments away from what they describe.

The result must mean exactly what the file meant (PyYAML reads both the
same), or nothing is written: a layout never changes a value.

The file is first read by the validating reader (``yaml_read.load_yaml``),
with its limits: nesting depth, aliases that repeat too many values, tags.
What it refuses, fmt refuses with the same ``file:line`` message, at once:
ruamel.yaml has no such limits (an alias bomb took minutes to lay out and
compare, a deep nesting crashed it: issue 41 item 7).
"""

from __future__ import annotations

import io
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from reconciler.errors import ManifestError

# Wider than any line a person writes: ruamel.yaml would otherwise fold long values onto a second line.
_NO_WRAP = 1 << 20


def _round_trip() -> YAML:
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.width = _NO_WRAP
    handler.indent(mapping=2, sequence=4, offset=2)
    return handler


def canonical(text: str, name: str) -> tuple[str, Any]:
    """``text`` (the manifest file ``name``) in the canonical layout, and what it holds
    (the round-trip tree); ``ManifestError`` (``name:line: ...``) when it is not YAML."""
    if not text.strip():
        return text, None  # an empty file has no layout
    from reconciler.manifest.yaml_read import load_yaml

    checked = load_yaml(text, name)
    if checked.fatal:
        raise ManifestError([f"{p}; it cannot be formatted" for p in checked.problems])
    handler = _round_trip()
    try:
        document = handler.load(text)
        out = io.StringIO()
        handler.dump(document, out)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise ManifestError([f"{name}:{line}: not valid YAML, so it cannot be formatted: "
                             f"{exc.problem or exc.context}"]) from None
    except YAMLError as exc:
        raise ManifestError([f"{name}:1: not valid YAML, so it cannot be formatted: {exc}"]) from None
    result = "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n") + "\n"
    _same_meaning(text, result, name)
    return result, document


def _same_meaning(before: str, after: str, name: str) -> None:
    """``ManifestError`` when ``after`` does not hold what ``before`` held (a bug of the layout, never written)."""
    if yaml.safe_load(before) != yaml.safe_load(after):
        raise ManifestError([f"{name}:1: the canonical layout would change what this file means (a bug of "
                             "reconciler fmt, which left the file as it is); please report it with the file"])
