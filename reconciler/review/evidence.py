"""The review's evidence: every item with its decision, who decided it and when, and whether the
revocation was applied; as ``evidence.csv`` and one self-contained ``evidence.html``.

When and in which commit an item was decided comes from git: ``git blame`` of each reviewer's file
gives the commit that last wrote the item's ``decision:`` line, its author and author time (one call
per file), so a decision changed twice shows its last word; ``git log -1`` of the file gives the
commit that last changed it at all (one call per file).  The author is who git says made the
commit: as much as git can tell without a network (a signed commit's signature is not checked
here).  Outside a git repository the columns are empty and the page says so.  Whether a revocation was applied comes from the state: apply records each entry a review
revoked on the list's record (``AccessRecord.revoked``: the date and the state serial that apply
wrote).  The campaign's seal is copied from ``campaign.yaml`` as it is: ``assignment`` (the sha256 of
each reviewer's items, written by ``review start``) and ``closedDigest`` (the sha256 of the reviewers' files
as closed), so the evidence names the exact campaign it is about.
"""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path
from typing import Literal, NamedTuple

from reconciler.manifest.desired import Desired, DesiredCampaign, DesiredGroup
from reconciler.manifest.review_meaning import deciding_items, entry_of
from reconciler.models import Frozen
from reconciler.manifest.git_history import last_commit
from reconciler.state.model import RevokedByReview, State

Applied = Literal["applied", "not applied", ""]


class EvidenceRow(Frozen):
    reviewer: str
    workspace_id: str
    workspace_name: str | None = None
    kind: str
    key: str
    role: str
    why: str
    decision: str  # keep, revoke, or "" (undecided)
    reason: str | None = None
    location: str
    decided_on: str | None = None  # YYYY-MM-DD of the commit
    decided_commit: str | None = None
    decided_at: str | None = None  # the commit's author time, UTC (YYYY-MM-DDTHH:MM:SSZ)
    decided_by: str | None = None  # the commit's author email
    file_commit: str | None = None  # the commit that last changed the reviewer's file (git log -1)
    file_committed_at: str | None = None
    file_committed_by: str | None = None
    overdue: bool = False
    applied: Applied = ""  # for a revoke: whether an apply carried it out
    applied_on: str | None = None
    applied_serial: int | None = None
    assignment_digest: str | None = None  # campaign.yaml's assignment of the item's reviewer's file


class Figures(NamedTuple):
    items: int
    decided: int
    kept: int
    revoked: int
    revoked_applied: int
    overdue: int


class Evidence(Frozen):
    campaign: str
    started: datetime.date
    due: datetime.date
    on_due: str
    closed: datetime.date | None = None
    generated: datetime.date
    git: str  # how the decision dates were found, in one sentence
    # campaign.yaml's assignment, (reviewer's file, sha256 of its items); None: started before the seal
    assignment: tuple[tuple[str, str], ...] | None = None
    closed_digest: str | None = None  # campaign.yaml's closedDigest
    rows: tuple[EvidenceRow, ...] = ()

    def figures(self) -> Figures:
        rows = self.rows
        return Figures(items=len(rows), decided=sum(1 for r in rows if r.decision),
                       kept=sum(1 for r in rows if r.decision == "keep"),
                       revoked=sum(1 for r in rows if r.decision == "revoke"),
                       revoked_applied=sum(1 for r in rows if r.decision == "revoke" and r.applied == "applied"),
                       overdue=sum(1 for r in rows if r.overdue))


class Blame(NamedTuple):
    commit: str
    date: str  # committer date, YYYY-MM-DD
    at: str = ""  # author time, UTC, YYYY-MM-DDTHH:MM:SSZ
    author: str = ""  # author email


def git_blame(file: Path) -> dict[int, Blame] | None:
    """Line -> (commit, committer date) of ``file``; None when it is not in a git repository.
    A line not committed yet has no entry."""
    try:
        done = subprocess.run(["git", "blame", "--line-porcelain", "--", file.name], cwd=file.parent,
                              capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    found: dict[int, Blame] = {}
    commit, line, author, at = "", 0, "", ""
    for text in done.stdout.split("\n"):
        parts = text.split(" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and not text.startswith("\t"):
            commit, line, author, at = parts[0], int(parts[2]), "", ""
        elif text.startswith("author-mail "):
            author = text.removeprefix("author-mail ").strip().removeprefix("<").removesuffix(">")
        elif text.startswith("author-time ") and parts[1].isdigit():
            at = datetime.datetime.fromtimestamp(int(parts[1]), datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        elif text.startswith("committer-time ") and commit.strip("0"):
            day = datetime.datetime.fromtimestamp(int(parts[1]), datetime.UTC).date().isoformat()
            found[line] = Blame(commit, day, at, author)
    return found


def make_evidence(desired: Desired, campaign: DesiredCampaign, state: State | None,
                  today: datetime.date) -> Evidence:
    """The evidence of ``campaign`` on ``today``, decisions dated by git, revocations by ``state``."""
    # A reviewer's file that is gone was read from git with every item undecided: nothing to blame.
    blames: dict[str, dict[int, Blame] | None] = {f: git_blame(Path(f)) if Path(f).exists() else {}
                                                  for _, f in campaign.reviewer_files}
    changed = {f: last_commit(Path(f)) if Path(f).exists() else None for _, f in campaign.reviewer_files}
    in_git = all(b is not None for b in blames.values()) and bool(blames)
    revoked = _revoked(desired, state) if state is not None else None
    overdue = campaign.overdue(today)
    deciding = deciding_items(campaign.items)
    assignment, closed_digest = _recorded_seal(campaign)
    sealed = dict(assignment or ())
    rows = []
    for item in campaign.items:
        blame = (blames.get(item.file) or {}).get(item.location.line) if item.decision else None
        applied: Applied = ""
        record = None
        late = overdue and deciding[entry_of(item)].decision is None
        # An item nobody decided by the due date is revoked by the campaign's onDue: carried out like a revoke.
        if (item.decision == "revoke" or (late and campaign.on_due == "revoke")) and revoked is not None:
            record = revoked.get((item.workspace, f"{item.kind}:{item.key}", campaign.name))
            applied = "applied" if record is not None else "not applied"
        file = changed.get(item.file)
        rows.append(EvidenceRow(
            reviewer=item.reviewer, workspace_id=item.workspace, workspace_name=item.name, kind=item.kind,
            key=item.key, role=item.role, why=item.why, decision=item.decision or "", reason=item.reason,
            location=f"{item.location.file}:{item.location.line}",
            decided_on=blame.date if blame else None, decided_commit=blame.commit if blame else None,
            decided_at=blame.at or None if blame else None, decided_by=blame.author or None if blame else None,
            file_commit=file.sha if file else None, file_committed_at=file.when if file else None,
            file_committed_by=file.author if file else None,
            overdue=late, applied=applied,
            applied_on=record.applied if record else None, applied_serial=record.serial if record else None,
            assignment_digest=sealed.get(Path(item.file).name)))
    git = ("Decision dates and commits are from git blame of each reviewer's file (the commit that last "
           "wrote the decision line; empty: not committed yet)." if in_git else
           "The review files are not in a git repository: decision dates and commits are not known.")
    if state is None:
        git += " No state was given: whether revocations were applied is not known."
    return Evidence(campaign=campaign.name, started=campaign.started, due=campaign.due, on_due=campaign.on_due,
                    closed=campaign.closed, generated=today, git=git, rows=tuple(rows), assignment=assignment,
                    closed_digest=closed_digest)


def _recorded_seal(campaign: DesiredCampaign) -> tuple[tuple[tuple[str, str], ...] | None, str | None]:
    """``assignment`` and ``closedDigest`` as ``campaign.yaml`` records them (the loader has checked the
    files against them); (None, None) for a campaign file that cannot be read back."""
    from reconciler.manifest.reviews import CampaignSpec
    from reconciler.manifest.yaml_read import load_yaml

    name = campaign.location.file
    try:
        loaded = load_yaml(Path(name).read_text(encoding="utf-8"), name)
        spec = CampaignSpec.model_validate(loaded.document)
    except (OSError, UnicodeDecodeError, ValueError):
        return None, None
    assignment = tuple(sorted(spec.assignment.items())) if spec.assignment is not None else None
    return assignment, spec.closedDigest


def _revoked(desired: Desired, state: State) -> dict[tuple[str, str, str], RevokedByReview]:
    """(workspace id, "kind:key", campaign) -> how the revocation was applied, for every workspace a
    recorded list is on (a group's list is on its homepage and members)."""
    members: dict[str, list[str]] = {}
    for workspace_id, node in desired.list_holders(state.recorded_id):
        if isinstance(node, DesiredGroup):
            members.setdefault(node.address, []).append(workspace_id)
    found: dict[tuple[str, str, str], RevokedByReview] = {}
    for address, resource in state.resources.items():
        if resource.access is None or not resource.access.revoked:
            continue
        for workspace_id in members.get(address, [resource.id]):
            for key, record in resource.access.revoked.items():
                found[(workspace_id, key, record.campaign)] = record
    return found


CSV_HEADER = ("campaign", "reviewer", "workspace_id", "workspace_name", "kind", "email_or_domain", "role", "why",
              "decision", "reason", "decided_on", "decided_commit", "decided_at", "decided_by", "overdue", "applied",
              "applied_on", "applied_state_serial", "campaign_closed", "file_last_commit", "file_last_commit_at",
              "file_last_commit_by", "decision_line", "assignment_digest", "campaign_closed_digest")


def evidence_csv(evidence: Evidence) -> str:
    """RFC 4180, formula starts neutralised (``reconciler.report.spreadsheet``)."""
    from reconciler.report.spreadsheet import csv_text

    return csv_text(CSV_HEADER, ([
        evidence.campaign, r.reviewer, r.workspace_id, r.workspace_name, r.kind, r.key, r.role, r.why, r.decision,
        r.reason, r.decided_on, r.decided_commit, r.decided_at, r.decided_by, "yes" if r.overdue else "", r.applied,
        r.applied_on, str(r.applied_serial) if r.applied_serial is not None else None,
        evidence.closed.isoformat() if evidence.closed else None, r.file_commit, r.file_committed_at,
        r.file_committed_by, r.location, r.assignment_digest, evidence.closed_digest] for r in evidence.rows))


_FIGURES = (("items", "items"), ("decided", "decided"), ("kept", "kept"), ("revoked", "revoked"),
            ("revoked_applied", "revoked and applied"), ("overdue", "overdue"))


def evidence_html(evidence: Evidence) -> str:
    """The evidence page: the access report's style and escaping (``reconciler.report.html``)."""
    from reconciler.report.html import page_css, text

    figures = evidence.figures()._asdict()
    cards = "".join(
        f"<div class=\"figure{' alert' if key == 'overdue' and figures[key] else ''}\" "
        f"data-figure=\"{key.replace('_', '-')}\"><span class=\"value\">{figures[key]}</span>"
        f"<span class=\"label\">{text(label)}</span></div>" for key, label in _FIGURES)
    header = ("Reviewer", "Workspace", "Entry", "Role", "Decision", "Reason", "Decided", "Commit", "Committed by",
              "Applied", "Why it was there")
    body = "".join(
        "<tr>" + "".join(f"<td>{text(v)}</td>" for v in (
            r.reviewer, f"{r.workspace_name or ''} {r.workspace_id}".strip(), f"{r.kind} {r.key}", r.role,
            r.decision or ("overdue" if r.overdue else "open"), r.reason or "", r.decided_at or r.decided_on or "",
            (r.decided_commit or "")[:12], r.decided_by or "",
            f"{r.applied} {r.applied_on or ''} (serial {r.applied_serial})" if r.applied == "applied" else r.applied,
            r.why)) + "</tr>" for r in evidence.rows)
    closed = f", closed {evidence.closed.isoformat()}" if evidence.closed else ""
    if evidence.assignment is None:
        seal = ("campaign.yaml has no assignment: the campaign was started before review start sealed its items, "
                "so which items each reviewer was given is not sealed.")
    else:
        seal = ("Sealed by review start (campaign.yaml's assignment: the sha256 of each reviewer's items): "
                + "; ".join(f"{file} {digest}" for file, digest in evidence.assignment) + ".")
    if evidence.closed_digest:
        seal += f" Closed with closedDigest {evidence.closed_digest} (the sha256 of the reviewers' files as closed)."
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>Access review {text(evidence.campaign)} – evidence</title><style>{page_css()}</style></head><body>",
        f"<header><h1>Access review {text(evidence.campaign)}: evidence</h1><p class=\"meta\">Started "
        f"{evidence.started.isoformat()}, due {evidence.due.isoformat()} (onDue {text(evidence.on_due)}){closed}; "
        f"written {evidence.generated.isoformat()}. {text(evidence.git)}</p>",
        f"<p class=\"meta\" data-seal>{text(seal)}</p></header><main>",
        f"<section><h2>Headline figures</h2><div class=\"figures\">{cards}</div></section>",
        "<section><h2>Every item</h2><table><thead><tr>",
        "".join(f"<th>{text(h)}</th>" for h in header), f"</tr></thead><tbody>{body}</tbody></table></section>",
        "</main><footer>Made by <code>reconciler review report</code>. The same rows are in evidence.csv beside "
        "this file.</footer></body></html>\n"])
