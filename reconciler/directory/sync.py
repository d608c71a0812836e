"""``directory.yaml``: the directory written into the manifests, for review (``reconciler directory sync``).

The file holds what a plan takes from the directory, nothing more: each
group's active members, each leaver's day and successor.  It is written by a
tool and read in pull requests, so it is

- byte-stable: the same directory gives the same bytes (groups, members and
  leavers sorted, no time of writing), so that only a change of the
  directory is a change of the file;
- in ``reconciler fmt``'s layout (ruamel.yaml with fmt's settings writes it),
  so that ``fmt --check`` in CI never flags a synced file.  The contract's
  example (docs: directory.yaml) writes a list's dash under its key's first
  letter; fmt indents it by two, and fmt wins: everything else is as the
  contract shows it;
- quoted so that both YAML readers of the project read every name as the
  text it is: the manifest loader reads YAML 1.1 (PyYAML: ``yes`` is true,
  ``2026-12-01`` a date) and fmt YAML 1.2 (ruamel.yaml: ``1e3`` a number).
  A name or an email is written plain only when it is plain text to both
  (a letter first, then letters, digits, spaces and ``. _ @ ' + / & ( ) -``,
  no trailing space, not a YAML word such as ``yes``/``null``); any other is
  double-quoted, with escapes for what cannot be written as it is;
- without anything secret: names, emails and days; the state's address in
  the header is the store's own, which never holds a password.

``write_directory_file`` writes it atomically (``owned_files.write_owned``:
a temp file, fsynced, renamed; a link planted at the name refused) and only
when its bytes change; ``summary`` says what changed against the previous
file in a few lines.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from reconciler.directory.model import Directory
from reconciler.errors import ReconcilerError
from reconciler.owned_files import read_owned, write_owned
from reconciler.text import plural, printable, shortened

DIRECTORY_FILE = "directory.yaml"
# A directory.yaml of 100,000 people in 1,000 groups is a few MiB; this only stops a file planted by someone.
MAX_DIRECTORY_FILE_BYTES = 256 * 2**20
# The summary names each email added or removed up to this many per group, and counts beyond.
_NAMED_PER_GROUP = 5
_SUMMARY_LINES = 20

_PLAIN = re.compile(r"[^\W\d_][\w .@'+/&()-]*", re.UNICODE)
# Words YAML 1.1 or 1.2 read as a boolean or null when written plain (case-insensitively, which covers both).
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


class DirectorySyncError(ReconcilerError):
    """directory.yaml cannot be made from the directory, or cannot be written."""


@dataclass(frozen=True, slots=True)
class Leaver:
    """One person under ``deactivated``: since when, and who takes over (an active manager)."""

    since: date
    successor: str | None = None


@dataclass(frozen=True, slots=True)
class DirectoryFile:
    """What directory.yaml holds: groups by name (their active members), leavers by email."""

    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    deactivated: Mapping[str, Leaver] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """What ``sync_directory_file`` did: whether it wrote, what changed (lines), what to warn about."""

    path: Path
    written: bool
    changes: tuple[str, ...]
    warnings: tuple[str, ...]


def directory_file(directory: Directory) -> tuple[DirectoryFile, tuple[str, ...]]:
    """The file's content for ``directory``, and warnings: what the model could not resolve, and groups
    left out because two groups share their name (a team naming it could mean either; neither is granted).

    ``DirectorySyncError`` for a leaver without a day: the store records one for every leaver, and a
    leaver left out would keep their access."""
    warnings = list(directory.unresolved)
    names = [g.name for g in directory.groups]
    shared = sorted({n for n in names if names.count(n) > 1})
    for name in shared:
        warnings.append(f"{names.count(name)} groups are named {name!r}: each is left out of {DIRECTORY_FILE} (a "
                        "team naming it could mean either); rename them in the identity provider")
    groups = {g.name: tuple(sorted(g.members)) for g in directory.groups if g.name not in shared}
    active = {p.email for p in directory.people if p.active}
    deactivated: dict[str, Leaver] = {}
    for person in directory.leavers():
        if person.since is None:
            raise DirectorySyncError(f"The directory holds the leaver {person.email} without the day they were "
                                     f"deactivated, so {DIRECTORY_FILE} cannot say since when; the directory's store "
                                     "is inconsistent (report it as a bug). Nothing was written.")
        successor = person.manager if person.manager in active else None
        deactivated[person.email] = Leaver(since=person.since, successor=successor)
    return (DirectoryFile(groups=dict(sorted(groups.items())), deactivated=dict(sorted(deactivated.items()))),
            tuple(warnings))


def header(address: str) -> str:
    """The two comment lines naming where the file came from (``address`` made printable on one line)."""
    shown = printable(address).replace("\n", " ")
    return (f"# Written by `reconciler directory sync` from the directory of the state {shown}; do not edit by hand:\n"
            "# change the identity provider, then run `reconciler directory sync` again.\n")


def render(content: DirectoryFile, *, address: str) -> str:
    """The text of directory.yaml: the header, then ``directory:`` with ``groups`` and ``deactivated``."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    groups = CommentedMap()
    for name, members in sorted(content.groups.items()):
        listed = CommentedSeq(_scalar(m) for m in sorted(members))
        if not members:
            listed.fa.set_flow_style()  # `Sales Team: []`
        groups[_scalar(name)] = listed
    deactivated = CommentedMap()
    for email, leaver in sorted(content.deactivated.items()):
        entry = CommentedMap(since=leaver.since)
        if leaver.successor is not None:
            entry["successor"] = _scalar(leaver.successor)
        entry.fa.set_flow_style()  # `cy@acme.com: {since: 2026-12-01, successor: jane@acme.com}`
        deactivated[_scalar(email)] = entry
    document = CommentedMap(directory=CommentedMap(groups=groups, deactivated=deactivated))
    out = io.StringIO()
    _yaml().dump(document, out)
    return header(address) + out.getvalue()


def read_directory_file(text: str, name: str) -> DirectoryFile | None:
    """What a directory.yaml written before holds; None when it is not one (not YAML, another shape)."""
    from reconciler.manifest.yaml_read import load_yaml

    loaded = load_yaml(text, name)
    body = loaded.document.get("directory") if isinstance(loaded.document, Mapping) else None
    if loaded.fatal or not isinstance(body, Mapping):
        return None
    groups, deactivated = body.get("groups") or {}, body.get("deactivated") or {}
    if not isinstance(groups, Mapping) or not isinstance(deactivated, Mapping):
        return None
    read_groups: dict[str, tuple[str, ...]] = {}
    for group, members in groups.items():
        if not isinstance(members, list):
            return None
        read_groups[str(group)] = tuple(str(m) for m in members)
    read_leavers: dict[str, Leaver] = {}
    for email, entry in deactivated.items():
        since = entry.get("since") if isinstance(entry, Mapping) else None
        if not isinstance(since, date):
            return None
        successor = entry.get("successor")
        read_leavers[str(email)] = Leaver(since=since, successor=str(successor) if successor is not None else None)
    return DirectoryFile(groups=read_groups, deactivated=read_leavers)


def summary(before: DirectoryFile, after: DirectoryFile) -> tuple[str, ...]:
    """What changed from ``before`` to ``after``, one line per group or leaver, at most a screenful."""
    lines: list[str] = []
    for name in sorted(set(before.groups) | set(after.groups)):
        old, new = set(before.groups.get(name, ())), set(after.groups.get(name, ()))
        if name not in before.groups:
            lines.append(f"new group {_named(name)} ({plural(len(new), 'member')}){_listed('+', new)}")
        elif name not in after.groups:
            lines.append(f"group {_named(name)} is gone (it had {plural(len(old), 'member')})")
        elif old != new:
            lines.append(f"group {_named(name)}:{_listed('+', new - old)}{_listed('-', old - new)}")
    for email in sorted(set(after.deactivated) - set(before.deactivated)):
        leaver = after.deactivated[email]
        successor = f", successor {leaver.successor}" if leaver.successor else ""
        lines.append(f"new leaver {_named(email)} (since {leaver.since.isoformat()}{successor})")
    for email in sorted(set(before.deactivated) - set(after.deactivated)):
        lines.append(f"{_named(email)} is no longer a leaver")
    for email in sorted(set(before.deactivated) & set(after.deactivated)):
        if before.deactivated[email] != after.deactivated[email]:
            leaver = after.deactivated[email]
            lines.append(f"leaver {_named(email)} now since {leaver.since.isoformat()}, successor "
                         f"{leaver.successor or 'none'}")
    if len(lines) > _SUMMARY_LINES:
        lines[_SUMMARY_LINES - 1:] = [f"... and {len(lines) - _SUMMARY_LINES + 1} more changes"]
    return tuple(lines)


def sync_directory_file(directory: Directory, manifests: Path, *, address: str) -> SyncOutcome:
    """Write ``manifests``/directory.yaml for ``directory`` (the store at ``address``) when its bytes
    change, and say what changed against what it held."""
    if not manifests.is_dir():
        raise DirectorySyncError(f"The manifests directory {manifests} does not exist (or is not a directory); "
                                 f"{DIRECTORY_FILE} is written into it. Nothing was written.")
    path = manifests / DIRECTORY_FILE
    content, warnings = directory_file(directory)
    text = render(content, address=address)
    previous = read_owned(path, what="directory file", limit=MAX_DIRECTORY_FILE_BYTES, error=DirectorySyncError)
    data = text.encode("utf-8")
    if previous == data:
        return SyncOutcome(path=path, written=False, changes=(), warnings=warnings)
    changes: tuple[str, ...]
    if previous is None:
        changes = (f"a new file: {plural(len(content.groups), 'group')}, "
                   f"{plural(len(content.deactivated), 'leaver')}",)
    else:
        before = read_directory_file(previous.decode("utf-8", "replace"), str(path))
        if before is None:
            changes = ("the previous file was not a directory.yaml this tool can read: written anew",)
        else:
            changes = summary(before, content) or ("no group or leaver changed (the header or the layout did)",)
    write_owned(path, data, what="directory file", error=DirectorySyncError, mode=0o644)
    return SyncOutcome(path=path, written=True, changes=changes, warnings=warnings)


def _yaml() -> Any:
    """ruamel.yaml set as ``reconciler fmt`` sets it (``manifest/layout.py``), so that what it writes is
    already in fmt's layout (test_sync_yaml checks that fmt leaves a synced file as it is)."""
    from ruamel.yaml import YAML

    handler = YAML(typ="rt")
    handler.width = 1 << 20  # a long name stays on its line
    handler.indent(mapping=2, sequence=4, offset=2)
    return handler


def _scalar(text: str) -> Any:
    """``text`` written plain when both readers read it plain as this text, else double-quoted."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if _PLAIN.fullmatch(text) and not text.endswith(" ") and text.lower() not in _YAML_WORDS:
        return text
    return DoubleQuotedScalarString(text)


def _named(text: str) -> str:
    """A name or an email for the summary: plain when it is plain, quoted (printable) otherwise."""
    return text if _PLAIN.fullmatch(text) and not text.endswith(" ") else repr(printable(shortened(text, 80)))


def _listed(sign: str, emails: Iterable[str]) -> str:
    ordered = sorted(emails)
    if not ordered:
        return ""
    if len(ordered) > _NAMED_PER_GROUP:
        return f" {sign}{len(ordered)} members"
    return "".join(f" {sign}{_named(e)}" for e in ordered)
