"""Rules that span several fields or several files.

They read the loaded YAML tree itself rather than validated models, so that
they still run (and their problems are still reported in the same pass) when
some other part of the file has a type error.  Every access is guarded:
a value of the wrong type is the models' problem to report, not these rules'.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.models import ASSET_TYPES, FILE_ASSET_TYPES
from reconciler.manifest.yaml_lines import LineDict, LineList
from reconciler.text import printable, quoted, shortened

if TYPE_CHECKING:
    import mimetypes

UPLOADED_TYPES = frozenset(FILE_ASSET_TYPES) | {"video", "audio"}
DEFAULT_MAX_FILE_BYTES = 100 * 2**20

# The media types each file asset type accepts (a family when it ends in /):
# a .docx declared pdf would be refused by the service's conversion, or worse,
# published as something it is not.
_TYPE_MEDIA: dict[str, tuple[str, ...]] = {
    "pdf": ("application/pdf",),
    "image": ("image/",),
    "video": ("video/",),
    "audio": ("audio/",),
    "docx": ("application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "ppt": ("application/vnd.ms-powerpoint",
            "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    "xlsx": ("application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "htmlPage": ("text/html",),
}


def media_fits(asset_type: str, mime_type: str) -> bool:
    """True when ``mime_type`` is one the asset type ``asset_type`` takes."""
    base = mime_type.split(";")[0].strip().lower()
    return any(base.startswith(m) if m.endswith("/") else base == m for m in _TYPE_MEDIA.get(asset_type, ()))
TEMPLATE_ONLY_KEYS = ("name", "startDate", "targetEndDate", "actualEndDate", "deal")
SECTIONS = ("groups", "workspaces", "assets", "teams", "rules")

@functools.cache
def _mime_types() -> mimetypes.MimeTypes:
    # Only Python's built-in table (not /etc/mime.types), so the same file gets the
    # same type on every machine; the Office formats it lacks are added here.
    # Built (and mimetypes imported) on first use: it costs 3 ms, and most
    # manifests have no asset.
    import mimetypes

    table = mimetypes.MimeTypes()
    for mime_type, extension in (
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx"),
        ("application/vnd.openxmlformats-officedocument.presentationml.presentation", ".pptx"),
        ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx"),
        ("audio/mp4", ".m4a"),
    ):
        table.add_type(mime_type, extension)
    return table


def guess_mime_type(file: str) -> str | None:
    """The MIME type for a file name, from its extension alone; None when unknown."""
    return _mime_types().guess_type(file, strict=False)[0]


def file_rules(document: Any, file: str, base_dir: Path, root: Path, *,
               max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[Problem]:
    """Problems within one manifest file that no single model field can see."""
    if not isinstance(document, LineDict):
        return []
    problems: list[Problem] = []
    for key, group, _line in _entries(document, "groups"):
        problems += _access_rules(group, f"groups.{_shown(key)}", file)
        for member_key, member, member_line in _entries(group, "workspaces"):
            problems += _member_rules(member, f"groups.{_shown(key)}.workspaces.{_shown(member_key)}", member_line, file)
    for key, workspace, _ in _entries(document, "workspaces"):
        problems += _access_rules(workspace, f"workspaces.{_shown(key)}", file)
    for key, asset, line in _entries(document, "assets"):
        problems += _asset_rules(asset, f"assets.{_shown(key)}", line, file, base_dir, root, max_file_bytes)
    problems += _team_rules(document, file)
    problems += _directory_rules(document, file)
    for key, rule, _ in _entries(document, "rules"):
        ensure = rule.get("ensure")
        if isinstance(ensure, LineDict):
            problems += _duplicates(ensure, f"rules.{_shown(key)}.ensure", file, ensure.line)[0]
    return problems


def _team_rules(document: LineDict, file: str) -> list[Problem]:
    """A team lists each email once (case-insensitively, as the service compares them)."""
    teams = document.get("teams")
    if not isinstance(teams, LineDict):
        return []
    problems: list[Problem] = []
    for key, members in teams.items():
        if not isinstance(members, LineList):
            continue
        problems += [Problem(SourceLocation(file, line), (
            f"teams.{_shown(str(key))}[{index}]: {quoted(value)} is listed twice "
            f"(first at line {first}); keep one entry per person"))
            for index, value, line, first in _repeats(zip(members, members.item_lines, strict=True))]
    return problems


def _directory_rules(document: LineDict, file: str) -> list[Problem]:
    """A group of the directory lists each member once; a leaver is deactivated once (case-insensitively)."""
    directory = document.get("directory")
    if not isinstance(directory, LineDict):
        return []
    problems: list[Problem] = []
    groups = directory.get("groups")
    for name, members in groups.items() if isinstance(groups, LineDict) else ():
        if isinstance(members, LineList):
            problems += [Problem(SourceLocation(file, line), (
                f"directory.groups.{_shown(str(name))}[{index}]: {quoted(value)} is listed twice "
                f"(first at line {first}); keep one entry per person"))
                for index, value, line, first in _repeats(zip(members, members.item_lines, strict=True))]
    leavers = directory.get("deactivated")
    if isinstance(leavers, LineDict):
        problems += [Problem(SourceLocation(file, line), (
            f"directory.deactivated: {quoted(value)} is deactivated twice (first at line {first}); keep one"))
            for _, value, line, first in _repeats((k, leavers.key_lines[k]) for k in leavers)]
    return problems


def _repeats(values: Iterable[tuple[Any, int]]) -> Iterator[tuple[int, str, int, int]]:
    """(index, value, line, the first one's line) of each text listed again in ``values`` (each
    with its line), compared without surrounding spaces and lower-cased."""
    first_line: dict[str, int] = {}
    for index, (value, line) in enumerate(values):
        if not isinstance(value, str):
            continue
        value = value.strip().lower()
        if value in first_line:
            yield index, value, line, first_line[value]
        else:
            first_line[value] = line


def _shown(text: str) -> str:
    """A manifest key or value as a message shows it: one line, at most 80 characters."""
    return printable(shortened(text))


def manifest_set_rules(documents: list[tuple[str, Any]]) -> list[Problem]:
    """Problems between files (or places): keys defined twice, workspaces managed twice."""
    problems: list[Problem] = []
    first_key: dict[tuple[str, str], SourceLocation] = {}
    first_id: dict[str, tuple[str, SourceLocation]] = {}
    for file, document in documents:
        if not isinstance(document, LineDict):
            continue
        for section in SECTIONS:
            for key, line in _keys(document, section):
                here = SourceLocation(file, line)
                first = first_key.setdefault((section, key), here)
                if first != here:
                    problems.append(Problem(here, (
                        f"{section}.{_shown(key)}: already defined at {first}; "
                        "a key may be defined in one file only")))
        for workspace_id, what, here in _managed_ids(document, file):
            if workspace_id not in first_id:
                first_id[workspace_id] = (what, here)
                continue
            first_what, first = first_id[workspace_id]
            problems.append(Problem(here, (
                f"{what}: workspace {_shown(workspace_id)} is already managed as {first_what} at {first}; "
                "manage each workspace in one place only")))
    return problems


def _entries(mapping: Any, section: str) -> Iterator[tuple[str, LineDict, int]]:
    """(key, value, line of the key) for each mapping-valued entry of ``mapping[section]``."""
    if not isinstance(mapping, LineDict):
        return
    entries = mapping.get(section)
    if not isinstance(entries, LineDict):
        return
    for key, value in entries.items():
        if isinstance(key, str) and isinstance(value, LineDict):
            yield key, value, entries.key_lines[key]


def _keys(mapping: LineDict, section: str) -> Iterator[tuple[str, int]]:
    """(key, line of the key) for each entry of ``mapping[section]``, whatever its value."""
    entries = mapping.get(section)
    if not isinstance(entries, LineDict):
        return
    for key in entries:
        if isinstance(key, str):
            yield key, entries.key_lines[key]


def _managed_ids(document: LineDict, file: str) -> Iterator[tuple[str, str, SourceLocation]]:
    for key, group, _ in _entries(document, "groups"):
        if isinstance(group.get("homepage"), str):
            yield group["homepage"], f"group.{_shown(key)} (homepage)", SourceLocation(file, group.key_lines["homepage"])
        for member_key, member, _ in _entries(group, "workspaces"):
            if isinstance(member.get("id"), str):
                yield (member["id"], f"group.{_shown(key)}.workspace.{_shown(member_key)}",
                       SourceLocation(file, member.key_lines["id"]))
    for key, workspace, _ in _entries(document, "workspaces"):
        if isinstance(workspace.get("id"), str):
            yield workspace["id"], f"workspace.{_shown(key)}", SourceLocation(file, workspace.key_lines["id"])


def _access_rules(parent: LineDict, path: str, file: str) -> list[Problem]:
    access = parent.get("access")
    if not isinstance(access, LineDict):
        return []
    problems, roles, lists_readable = _duplicates(access, f"{path}.access", file, parent.key_lines["access"])
    # Only an authoritative list replaces the whole live list, so only it must
    # bring its own owner; a non-authoritative one is checked after merging, in
    # the plan (as is a team with role owner that turns out to be empty).
    if access.get("authoritative", True) is True and lists_readable and "owner" not in roles:
        problems.append(Problem(SourceLocation(file, parent.key_lines["access"]), (
            f"{path}.access: no user or domain has role owner; an authoritative access list "
            "replaces the whole list, so it needs an owner (or set authoritative: false)")))
    return problems


def _duplicates(access: LineDict, path: str, file: str, line_of_list: int) -> tuple[list[Problem], list[Any], bool]:
    """Entries listed twice in one access list (or a rule's ``ensure``); also
    every role given, and whether every entry could be read."""
    problems: list[Problem] = []
    roles: list[Any] = []
    lists_readable = True
    for list_key, field in _LISTED:
        entries = access.get(list_key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            lists_readable = False
            continue
        mappings = [entry for entry in entries if isinstance(entry, dict)]
        if len(mappings) != len(entries):
            lists_readable = False
        roles += [entry.get("role") for entry in mappings]
        if _listed_again([entry.get(field) for entry in mappings]):  # the lines are looked up only then
            problems += _listed_twice(access, entries, list_key, field, path, file, line_of_list)
    return problems, roles, lists_readable


_LISTED = (("users", "email"), ("teams", "team"), ("domains", "domain"))


def _listed_again(values: list[Any]) -> bool:
    """Whether a text of ``values`` comes again, compared without surrounding spaces and lower-cased (as
    ``_repeats`` compares them); what is not text is left out. Folded by ``map``, without a Python step per
    value, when all are text: a manifest of 10,000 lists has 250,000 of them."""
    try:
        return len(set(map(str.lower, map(str.strip, values)))) < len(values)
    except TypeError:  # not all text (a number, a mapping, nothing): a malformed entry, said by validation
        named = [value.strip().lower() for value in values if isinstance(value, str)]
        return len(set(named)) < len(named)


def _listed_twice(access: LineDict, entries: list[Any], list_key: str, field: str, path: str, file: str,
                  line_of_list: int) -> list[Problem]:
    lines = entries.item_lines if isinstance(entries, LineList) else [access.key_lines.get(list_key, line_of_list)] * len(
        entries)
    values = [entry.get(field) if isinstance(entry, dict) else None for entry in entries]
    return [Problem(SourceLocation(file, line), (
        f"{path}.{list_key}[{index}]: {field} {quoted(value)} is listed twice "
        f"(first at line {first}); keep one entry per {field}"))
        for index, value, line, first in _repeats(zip(values, lines, strict=True))]


def _member_rules(member: LineDict, path: str, line: int, file: str) -> list[Problem]:
    problems: list[Problem] = []
    if "id" in member and "template" in member:
        problems.append(Problem(SourceLocation(file, member.key_lines["template"]), (
            f"{path}: has both id and template; give id for an existing workspace "
            "or template to create one, not both")))
    elif "id" not in member and "template" not in member:
        problems.append(Problem(SourceLocation(file, line), (
            f"{path}: give id (an existing workspace) or template (create one from a template)")))
    elif "id" in member:
        for key in TEMPLATE_ONLY_KEYS:
            if key in member:
                problems.append(Problem(SourceLocation(file, member.key_lines[key]), (
                    f"{path}.{key}: only a workspace created from a template takes {key}; "
                    "an existing workspace (id) keeps its own")))
    else:
        problems += _template_member_rules(member, path, line, file)
    deal = member.get("deal")
    if isinstance(deal, LineDict):
        given = [k for k in ("crmOneDealId", "crmTwoOpportunityId") if k in deal]
        if len(given) != 1:
            what = "has both" if given else "needs one of"
            problems.append(Problem(SourceLocation(file, member.key_lines["deal"]), (
                f"{path}.deal: {what} crmOneDealId and crmTwoOpportunityId; give exactly one")))
    return problems


def _template_member_rules(member: LineDict, path: str, line: int, file: str) -> list[Problem]:
    problems: list[Problem] = []
    if "name" not in member:
        problems.append(Problem(SourceLocation(file, line), (
            f"{path}: a workspace created from a template needs a name: it is how reconciler recognises "
            "the workspace when the answer to its creation is lost, so a credit is never spent twice")))
    for key in ("sections", "pages", "tasks"):
        if key in member:
            problems.append(Problem(SourceLocation(file, member.key_lines[key]), (
                f"{path}.{key}: a workspace created from a template has no {key} ids before it exists; "
                f"once it is created, replace template (and its creation fields) with the id that "
                f"'reconciler state show' records, then set {key}")))
    return problems


def _asset_rules(asset: LineDict, path: str, line: int, file: str, base_dir: Path, root: Path,
                 max_file_bytes: int) -> list[Problem]:
    kind = asset.get("type")
    if kind not in ASSET_TYPES:
        return []
    if kind == "embed" and ("url" in asset) == ("customCode" in asset):
        what = "has both url and customCode" if "url" in asset else "needs url or customCode"
        return [Problem(SourceLocation(file, line), f"{path}: an embed {what}; give exactly one")]
    code = asset.get("customCode")
    if kind == "embed" and isinstance(code, str) and not code.strip():
        # The service refuses blank embed code (400): say so before any call.
        return [Problem(SourceLocation(file, asset.key_lines["customCode"]),
                        f"{path}.customCode: is blank; give the embed code, or a url instead")]
    if kind == "video" and "metadata" not in asset:
        return [Problem(SourceLocation(file, line), (
            f"{path}: a video needs metadata: {{width, height, duration}} (the service takes them at creation "
            "and they cannot be set later)"))]
    name = asset.get("file")
    if kind not in UPLOADED_TYPES or not isinstance(name, str) or not name:
        return []
    here = SourceLocation(file, asset.key_lines["file"])
    problem = asset_file_problem(name, base_dir, root, max_file_bytes=max_file_bytes)
    if problem:
        return [Problem(here, f"{path}.file: {problem}")]
    given = asset.get("mimeType")
    guessed = guess_mime_type(name)
    if not isinstance(given, str) and guessed is None:
        return [Problem(here, (
            f"{path}.file: cannot tell the MIME type of {quoted(name)} from its extension; add mimeType"))]
    mime = given if isinstance(given, str) else guessed
    assert mime is not None
    if not media_fits(kind, mime):
        where = here if not isinstance(given, str) else SourceLocation(file, asset.key_lines["mimeType"])
        return [Problem(where, (
            f"{path}: type {kind} does not take {_shown(mime)} ({quoted(name)}); "
            "declare the type that matches the file "
            f"(or fix the file)"))]
    return []


def asset_file_problem(name: str, base_dir: Path, root: Path, *,
                       max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str | None:
    """Why an asset's ``file`` cannot be used, or None when it names a
    regular file inside ``root`` of at most ``max_file_bytes``."""
    if "\x00" in name:
        return "the path contains a NUL character"
    shown = quoted(name)
    try:
        return _path_problem(name, shown, base_dir, root, max_file_bytes)
    except RuntimeError:  # Python 3.11's resolve() on a symlink loop
        return f"{shown} cannot be used: it leads into a loop of symlinks"
    except UnicodeError:  # a lone surrogate ("\ud800" in the YAML) has no bytes on disk
        return f"{shown} cannot be used: it is not a file name this system can encode"
    except OSError as exc:
        return f"{shown} cannot be used: {exc.strerror or exc}"


def _path_problem(name: str, shown: str, base_dir: Path, root: Path, max_file_bytes: int) -> str | None:
    relative = Path(name)
    if relative.is_absolute() or name.startswith("~"):
        return f"{shown} must be a path relative to the manifest file, not an absolute one"
    target = base_dir / relative
    # resolve() follows symlinks, so a link that points out of the root is caught too.
    if not target.resolve().is_relative_to(root.resolve()):
        return f"{shown} is outside the manifest root {root}; keep asset files beside the manifests"
    if not target.exists():
        return f"{shown} does not exist (looked for {printable(str(target))})"
    if not target.is_file():
        return f"{shown} is not a file"
    with target.open("rb"):  # unreadable: an OSError, reported by the caller
        pass
    size = target.stat().st_size
    if size > max_file_bytes:
        return (f"{shown} is {size:,} bytes, over the limit of {max_file_bytes:,} "
                f"(raise it with --max-file-size if the service takes it)")
    return None
