"""What changed since an earlier report (``report --since``).

An earlier ``access.json`` holds every row of the company then; it becomes a
mapping (workspace, kind, email or domain) → role, compared with the report's
rows: an entry that appeared is a grant, one that went a revocation, a role
raised an escalation and a role lowered a downgrade (``reconciler.vocabulary``).

A state file is refused (issue 41 item 4): it records only the entries the
last apply put on the lists it manages, not what each list held, so compared
with the company it made grants of entries that were there all along (on a
non-authoritative list, or added in the web app since) and missed every
revocation on a workspace or of an entry it never recorded.  Nothing in it
can tell those apart.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from reconciler.text import parse_json
from reconciler.company.model import EntryKind, Leaver
from reconciler.errors import ConfigError
from reconciler.report.model import (
    REPORT_KIND,
    AccessReport,
    MadeReport,
    ReportLine,
    is_internal,
    managed_by,
    subject_domain,
)
from reconciler.vocabulary import Privilege, privilege

# The order the page and changes.csv list them in: what a reviewer looks for first.
CHANGE_ORDER: tuple[Privilege, ...] = ("grant", "escalation", "revocation", "downgrade")
# An earlier report is a few hundred bytes a row: 2 GiB is millions of rows.
MAX_SINCE_BYTES = 2 * 2**30

EntryAddress = tuple[str, EntryKind, str]  # workspace id, kind, email or domain


class AccessChange(NamedTuple):
    """One entry granted, revoked, raised or lowered since the earlier read."""

    change: Privilege
    workspace_id: str
    workspace_name: str | None
    kind: EntryKind
    key: str
    before: str | None
    after: str | None
    external: bool
    managed_by: str


class Baseline(NamedTuple):
    """The earlier report: entry → role, and each workspace's name then."""

    label: str  # for people: what was compared with
    roles: Mapping[EntryAddress, str]
    names: Mapping[str, str | None]


class ChangeSet(NamedTuple):
    baseline: Baseline
    changes: tuple[AccessChange, ...]

    def count(self, change: Privilege) -> int:
        return sum(1 for c in self.changes if c.change == change)


STATE_REFUSED = ("--since {path} is a state file, not a report: it records only the entries the last apply put on "
                 "the lists reconciler manages, not what each person had, so a difference against it would show "
                 "grants that are not and miss revocations. Give the access.json of an earlier report instead "
                 "('reconciler report --out DIR' writes DIR/access.json; keep it for the next --since).")


def load_baseline(path: Path) -> Baseline:
    """The earlier report (its access.json) at ``path``; ``ConfigError`` for anything else, a state file included."""
    from reconciler.owned_files import read_owned

    data = read_owned(path, what="--since file", limit=MAX_SINCE_BYTES, error=ConfigError)
    if data is None:
        raise ConfigError(f"--since {path}: no such file. Give the access.json of an earlier report.")
    try:
        raw = parse_json(data)
    except ValueError as exc:
        raise ConfigError(f"--since {path} is not JSON ({exc}); give the access.json of an earlier report.") from exc
    if isinstance(raw, dict) and raw.get("kind") == REPORT_KIND:
        try:
            return report_baseline(AccessReport.model_validate(raw), label=f"the report {path}")
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise ConfigError(f"--since {path} is not a valid access report: {where}: {error['msg']}.") from exc
    if isinstance(raw, dict) and "resources" in raw:  # a state file (reconciler/state/model.py)
        raise ConfigError(STATE_REFUSED.format(path=path))
    raise ConfigError(f"--since {path} is not the access.json of a reconciler report.")


def report_baseline(report: AccessReport, *, label: str) -> Baseline:
    roles = {(r.workspace_id, r.kind, r.key): r.role for r in report.rows}
    names = {w.id: w.name for w in report.workspaces}
    when = report.generated_at.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Baseline(f"{label} of {when}", roles, names)


def _revoked_by(report: MadeReport) -> Callable[[EntryAddress], str]:
    """For an entry gone since: the rule matching its workspace that revokes it (``rule offboarded at
    rules.yaml:14``), as the "managed by" line of the revocation; "" when no rule does."""
    leavers: dict[tuple[EntryKind, str], list[Leaver]] = {}
    for leaver in report.leavers:
        leavers.setdefault((leaver.kind, leaver.key), []).append(leaver)
    rules = {w.id: w.rules for w in report.workspaces}

    def line(address: EntryAddress) -> str:
        workspace_id, kind, key = address
        matching = rules.get(workspace_id, ())
        found = next((v for v in leavers.get((kind, key), ()) if v.rule in matching), None)
        return "" if found is None else f"rule {found.rule} at {found.location}"

    return line


def changes_since(baseline: Baseline, report: MadeReport) -> ChangeSet:
    """Every entry whose role differs between ``baseline`` and ``report``, in ``CHANGE_ORDER``,
    then by workspace id, kind and email or domain."""
    now: dict[EntryAddress, ReportLine] = {(r.workspace_id, r.kind, r.key): r for r in report.rows}
    names = {**baseline.names, **{w.id: w.name for w in report.workspaces}}
    internal = report.internal_domains
    revoked_by = _revoked_by(report)
    found: list[AccessChange] = []
    for address in baseline.roles.keys() | now.keys():
        before, row = baseline.roles.get(address), now.get(address)
        after = row.role if row is not None else None
        if before == after:
            continue
        workspace_id, kind, key = address
        found.append(AccessChange(
            change=privilege(before, after), workspace_id=workspace_id, workspace_name=names.get(workspace_id),
            kind=kind, key=key, before=before, after=after,
            external=row.external if row is not None else not is_internal(subject_domain(kind, key), internal),
            managed_by=managed_by(row.why) if row is not None else revoked_by(address),
        ))
    order = {c: i for i, c in enumerate(CHANGE_ORDER)}
    found.sort(key=lambda c: (order[c.change], c.workspace_id, c.kind != "user", c.key))
    return ChangeSet(baseline, tuple(found))


