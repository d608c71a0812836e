"""``reconciler export``: manifests written from the live service.

For a company that set its workspaces up by hand: one paginated listing of
every workspace becomes one manifest file per account, each workspace a
standalone ``workspaces:`` entry whose access list is exactly what the
service reports, so that ``validate`` passes and ``plan`` shows no changes.

The work is split so the part that decides what to write is pure:
``build_manifests`` turns workspaces into file texts, ``export_manifests``
fetches, checks the directory and writes.  Output is sorted and carries no
timestamps: the same service always gives byte-identical files.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from reconciler.errors import ConfigError
from reconciler.live import ACCESS_PROPERTIES, shared_entries
from reconciler.manifest.load import MANIFEST_SUFFIXES, is_emulator_data
from reconciler.text import plural

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reconciler.api.client import WorkspaceClient
    from reconciler.api.models import Workspace

# What a manifest entry needs (access) and what the files are named and
# grouped by (names, accounts); entry ids come unasked and reveal shared lists.
EXPORT_PROPERTIES: tuple[str, ...] = (*ACCESS_PROPERTIES, "accountId", "account.name")

NO_ACCOUNT_FILE = "workspaces"
# Long workspace names make unwieldy keys and addresses; 60 characters keep
# them readable and still distinct in practice (collisions get suffixes).
MAX_SLUG = 60


@dataclass(frozen=True)
class ExportedFile:
    """One manifest file: where it went and what it holds."""

    path: Path
    account: str | None  # the account's name (or id); None for workspaces without an account
    workspaces: int


@dataclass(frozen=True)
class ExportResult:
    """What ``export_manifests`` wrote, for the CLI to report."""

    out_dir: Path
    files: tuple[ExportedFile, ...]
    workspaces: int
    non_authoritative: int  # lists written with authoritative: false (no owner, or unreadable entries)
    without_access: int  # workspaces with no entry at all, written as id only


@dataclass(frozen=True)
class ManifestText:
    """A file to write: its name inside the output directory and its text."""

    name: str
    account: str | None
    workspaces: int
    text: str


@dataclass(frozen=True)
class _Entry:
    value: str  # email or domain, lower-cased
    role: str


@dataclass(frozen=True)
class _Exported:
    """A workspace as it will be written, before its key is chosen."""

    id: str
    name: str | None
    account_id: str | None
    account_name: str | None
    users: tuple[_Entry, ...]
    domains: tuple[_Entry, ...]
    entry_ids: frozenset[str]
    unreadable: int  # entries without an email, domain or role: left out of the file

    @property
    def authoritative(self) -> bool:
        # An authoritative list needs an owner (the validator insists), and one
        # missing entries would remove them; either way leave unlisted entries alone.
        has_owner = any(e.role == "owner" for e in (*self.users, *self.domains))
        return has_owner and self.unreadable == 0

    @property
    def has_access(self) -> bool:
        return bool(self.users or self.domains)


def export_manifests(client: WorkspaceClient, out_dir: Path) -> ExportResult:
    """Write manifests for every workspace the client's token can see into ``out_dir``.

    Lists workspaces once, page by page (never one call per workspace), and
    writes one file per account plus ``workspaces.yaml`` for workspaces
    without one.  Creates ``out_dir`` when missing; raises ``ConfigError``,
    before any request, when it already holds manifests.
    """
    check_out_dir(out_dir)
    manifests = build_manifests(client.list_workspaces(properties=EXPORT_PROPERTIES))
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[ExportedFile] = []
    for manifest in manifests.files:
        path = out_dir / manifest.name
        # Bytes, not text mode: the same "\n" line endings on every platform.
        path.write_bytes(manifest.text.encode("utf-8"))
        files.append(ExportedFile(path=path, account=manifest.account, workspaces=manifest.workspaces))
    return ExportResult(
        out_dir=out_dir,
        files=tuple(files),
        workspaces=manifests.workspaces,
        non_authoritative=manifests.non_authoritative,
        without_access=manifests.without_access,
    )


def check_out_dir(out_dir: Path) -> None:
    """Raise ``ConfigError`` unless ``out_dir`` is missing, or a directory without manifests.

    Emulator data files (a seed beside the manifests) do not count: the
    manifest loader skips them too.
    """
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise ConfigError(f"--out {out_dir} is a file; export writes a directory of manifests. Give a new directory.")
    existing = sorted(p.name for p in out_dir.iterdir()
                      if p.is_file() and p.suffix in MANIFEST_SUFFIXES and not _is_emulator_file(p))
    if existing:
        raise ConfigError(
            f"The directory {out_dir} already holds manifests ({', '.join(existing)}); export never "
            "overwrites them. Give an empty or new directory with --out and compare or merge the result by hand."
        )


@dataclass(frozen=True)
class BuiltManifests:
    """The files ``build_manifests`` decided on, sorted by name, and counts."""

    files: tuple[ManifestText, ...]
    workspaces: int
    non_authoritative: int
    without_access: int


def build_manifests(workspaces: Iterable[Workspace]) -> BuiltManifests:
    """The manifest files for ``workspaces``: pure, deterministic, no I/O.

    Keys are unique across all files (the directory is merged), so the same
    set of workspaces in any order gives the same files.
    """
    exported = sorted((_read(ws) for ws in workspaces), key=lambda w: w.id)
    keys = _workspace_keys(exported)
    sharing = _shared_lists(exported, keys)

    by_account: dict[str | None, list[_Exported]] = defaultdict(list)
    for ws in exported:
        by_account[ws.account_id].append(ws)
    file_names = _file_names(by_account)

    files = []
    # Sorted by file name, the order the manifest loader reads a directory in.
    for account_id, name in sorted(file_names.items(), key=lambda item: f"{item[1]}.yaml"):
        members = sorted(by_account[account_id], key=lambda w: keys[w.id])
        label = _account_label(members[0]) if account_id is not None else None
        text = _render_file(label, account_id, members, keys, sharing)
        files.append(ManifestText(name=f"{name}.yaml", account=label, workspaces=len(members), text=text))
    return BuiltManifests(
        files=tuple(files),
        workspaces=len(exported),
        non_authoritative=sum(1 for w in exported if w.has_access and not w.authoritative),
        without_access=sum(1 for w in exported if not w.has_access),
    )


def render_report(result: ExportResult) -> str:
    """What the CLI prints: one line per file, a summary, and how to check the result."""
    lines = []
    for file in result.files:
        what = f"account {file.account}" if file.account is not None else "no account"
        lines.append(f"Wrote {file.path} ({file.workspaces} workspace{_s(file.workspaces)}, {what})")
    if not result.files:
        lines.append(f"The service reported no workspaces; nothing was written to {result.out_dir}.")
        return "\n".join(lines) + "\n"
    lines.append(
        f"Exported {result.workspaces} workspace{_s(result.workspaces)} into {len(result.files)} "
        f"file{_s(len(result.files))}: {result.non_authoritative} access list{_s(result.non_authoritative)} "
        f"written with authoritative: false (no owner, or entries that could not be read), "
        f"{result.without_access} workspace{_s(result.without_access)} without any access entry."
    )
    lines.append("Every workspace is standalone: group membership cannot be read from the API, "
                 "so write groups by hand.")
    lines.append("Check: these should report the manifests valid and no changes "
                 "(with the same connection flags for plan):")
    lines.append(f"  reconciler validate {result.out_dir}")
    lines.append(f"  reconciler plan {result.out_dir} --state {result.out_dir / 'reconciler.state.json'}")
    return "\n".join(lines) + "\n"


# --- reading -----------------------------------------------------------------


def _read(ws: Workspace) -> _Exported:
    users: dict[str, _Entry] = {}
    domains: dict[str, _Entry] = {}
    entry_ids: set[str] = set()
    unreadable = 0
    for wu in ws.workspaceUsers or []:
        entry_ids.add(wu.id)
        email = ((wu.user.email if wu.user is not None else None) or "").strip().lower()
        if not email or wu.role is None:
            unreadable += 1
            continue
        users[email] = _Entry(email, str(wu.role))
    for wd in ws.workspaceDomains or []:
        entry_ids.add(wd.id)
        # The service drops a trailing dot; so does the plan's reading of live.
        domain = (wd.domain or "").strip().lower().rstrip(".")
        if not domain or wd.role is None:
            unreadable += 1
            continue
        domains[domain] = _Entry(domain, str(wd.role))
    account_id = ws.accountId or (ws.account.id if ws.account is not None else None)
    return _Exported(
        id=ws.id,
        name=ws.name,
        account_id=account_id,
        account_name=ws.account.name if ws.account is not None else None,
        users=tuple(sorted(users.values(), key=lambda e: e.value)),
        domains=tuple(sorted(domains.values(), key=lambda e: e.value)),
        entry_ids=frozenset(entry_ids),
        unreadable=unreadable,
    )


def _shared_lists(exported: Sequence[_Exported], keys: Mapping[str, str]) -> dict[str, list[str]]:
    """Workspace id → keys of the other workspaces showing the same entry ids
    (``shared_entries``, which the plan uses too)."""
    sharing = shared_entries({ws.id: ws.entry_ids for ws in exported})
    return {wid: sorted(keys[o] for o in others) for wid, others in sharing.items()}


# --- naming ------------------------------------------------------------------


def slug(text: str) -> str:
    """``text`` as ``[a-z0-9][a-z0-9-]*`` (accents dropped, other runs → ``-``); may be empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:MAX_SLUG].rstrip("-")


def unique_names(bases: Sequence[str], *, reserved: Iterable[str] = ()) -> list[str]:
    """A distinct name per base, in order: a base used once keeps itself; the
    first of several equal bases keeps it too, the others get ``-2``, ``-3``...
    skipping names already taken (including ``reserved``).

    Give ``bases`` in a deterministic order and the result is deterministic.
    """
    reserved = set(reserved)
    counts = Counter(bases)
    # Bases used once are claimed first, so a workspace really named "x 2"
    # keeps "x-2" and a duplicate "x" moves on to "x-3".
    taken = reserved | {b for b, n in counts.items() if n == 1 and b not in reserved}
    names = []
    for base in bases:
        if counts[base] == 1 and base not in reserved:
            names.append(base)
            continue
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        names.append(name)
    return names


def _workspace_keys(exported: Sequence[_Exported]) -> dict[str, str]:
    """Workspace id → manifest key, unique across all files."""
    bases = [(slug(ws.name or "") or slug(ws.id) or "workspace", ws.id) for ws in exported]
    bases.sort()
    names = unique_names([base for base, _ in bases])
    return {wid: name for (_, wid), name in zip(bases, names, strict=True)}


def _file_names(by_account: Mapping[str | None, Sequence[_Exported]]) -> dict[str | None, str]:
    """Account id (None: no account) → file name without suffix."""
    names: dict[str | None, str] = {}
    reserved: list[str] = []
    if None in by_account:
        names[None] = NO_ACCOUNT_FILE
        reserved.append(NO_ACCOUNT_FILE)
    accounts = sorted(
        ((slug(_account_name(ws_list)) or slug(account_id) or "account", account_id)
         for account_id, ws_list in by_account.items() if account_id is not None),
    )
    for (_, account_id), name in zip(accounts, unique_names([b for b, _ in accounts], reserved=reserved), strict=True):
        names[account_id] = name
    return names


def _account_name(workspaces: Sequence[_Exported]) -> str:
    # Every workspace of an account reports the same name; take the first
    # non-empty one in id order so the choice never depends on listing order.
    return next((w.account_name for w in workspaces if w.account_name), "")


def _account_label(ws: _Exported) -> str:
    return ws.account_name or ws.account_id or ""


# --- writing -----------------------------------------------------------------


class _FlowMapping(dict[str, str]):
    """An access entry, written on one line: ``{email: x, role: y}``."""


class _ManifestDumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key, as the README's examples do.
        super().increase_indent(flow, False)


_ManifestDumper.add_representer(
    _FlowMapping,
    lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True),
)


def _render_file(label: str | None, account_id: str | None, members: Sequence[_Exported],
                 keys: Mapping[str, str], sharing: Mapping[str, list[str]]) -> str:
    if account_id is None:
        about = "the workspaces that belong to no account"
    else:
        about = f"the workspaces of account {_one_line(label or '')} ({_one_line(account_id)})"
    header = [
        f"# Exported by `reconciler export` from the live service: {about}.",
        "#",
        "# Group membership cannot be read from the API, so every workspace is exported",
        "# as a standalone workspace with its own copy of its access list. Workspaces",
        "# connected in a group share one list in the service: write the group by hand",
        "# (groups: with its homepage and members) before changing their access.",
        "# Lists without an owner are exported with authoritative: false, which",
        "# leaves entries not listed alone.",
        "version: 1",
        "workspaces:",
    ]
    body: list[str] = []
    for ws in members:
        comment = _one_line(ws.name) if ws.name else "(no name)"
        if ws.id in sharing:
            comment += f"; shares access entries with {', '.join(sharing[ws.id])}, so probably one group"
        if ws.unreadable:
            comment += f"; {plural(ws.unreadable, 'entry', 'entries')} without email, domain or role left out"
        body.append(f"  # {comment}")
        dumped = yaml.dump({keys[ws.id]: _workspace_doc(ws)}, Dumper=_ManifestDumper, sort_keys=False,
                           allow_unicode=True, width=10_000, default_flow_style=False)
        body.extend(f"  {line}" for line in dumped.splitlines())
    return "\n".join(header + body) + "\n"


def _workspace_doc(ws: _Exported) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": ws.id}
    if not ws.has_access:
        return doc
    access: dict[str, Any] = {}
    if ws.users:
        access["users"] = [_FlowMapping(email=e.value, role=e.role) for e in ws.users]
    if ws.domains:
        access["domains"] = [_FlowMapping(domain=e.value, role=e.role) for e in ws.domains]
    if not ws.authoritative:
        access["authoritative"] = False
    doc["access"] = access
    return doc


def _one_line(text: str) -> str:
    """``text`` safe inside a comment: control characters (newlines) become spaces."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _is_emulator_file(path: Path) -> bool:
    try:
        return is_emulator_data(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False


def _s(n: int) -> str:
    return "" if n == 1 else "s"
