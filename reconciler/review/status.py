"""``review status``: per reviewer, decided out of total, and what is overdue.

A pure view of the campaign's files (no call to the service); the value is
a pydantic model, so the JSON view is the value itself and the text and
markdown views compute nothing of their own.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from reconciler.manifest.desired import DesiredCampaign, ReviewItem
from reconciler.manifest.review_meaning import undecided_items
from reconciler.models import Frozen
from reconciler.text import md_code, md_text, plural, printable


class ReviewerProgress(Frozen):
    reviewer: str
    file: str
    total: int
    decided: int
    kept: int
    revoked: int
    missing: bool = False  # the file is gone: its items, as review start wrote them, are undecided


class OpenItem(Frozen):
    """An item of an entry nobody decided (``reconciler.manifest.review_meaning``), after the due date."""

    reviewer: str
    workspace: str
    kind: str
    key: str
    role: str
    location: str


class CampaignStatus(Frozen):
    campaign: str
    due: date
    on_due: str
    today: date
    closed: date | None = None
    total: int
    decided: int
    reviewers: tuple[ReviewerProgress, ...] = ()
    missing: tuple[OpenItem, ...] = ()  # the items of the reviewers' files that are gone, each undecided
    overdue: tuple[OpenItem, ...] = ()

    @property
    def complete(self) -> bool:
        return self.decided == self.total


def campaign_status(campaign: DesiredCampaign, today: date) -> CampaignStatus:
    """How far the reviewers are, on ``today`` (UTC)."""
    by_reviewer: dict[str, list[ReviewItem]] = {reviewer: [] for reviewer, _ in campaign.reviewer_files}
    for item in campaign.items:
        by_reviewer.setdefault(item.reviewer, []).append(item)
    files = dict(campaign.reviewer_files)
    # The loader reads a reviewer's file that is gone from git, its items undecided (reconciler.manifest.reviews).
    gone = {reviewer for reviewer, file in campaign.reviewer_files if not Path(file).exists()}
    progress = tuple(ReviewerProgress(
        reviewer=reviewer, file=files.get(reviewer, ""), total=len(items),
        decided=sum(1 for i in items if i.decision is not None),
        kept=sum(1 for i in items if i.decision == "keep"), revoked=sum(1 for i in items if i.decision == "revoke"),
        missing=reviewer in gone) for reviewer, items in by_reviewer.items())
    overdue = tuple(_open(i) for i in undecided_items(campaign)) if campaign.overdue(today) else ()
    return CampaignStatus(campaign=campaign.name, due=campaign.due, on_due=campaign.on_due, today=today,
                          closed=campaign.closed, total=sum(p.total for p in progress),
                          decided=sum(p.decided for p in progress), reviewers=progress,
                          missing=tuple(_open(i) for i in campaign.items if i.reviewer in gone), overdue=overdue)


def _open(item: ReviewItem) -> OpenItem:
    return OpenItem(reviewer=item.reviewer, workspace=item.workspace, kind=item.kind, key=item.key, role=item.role,
                    location=f"{item.location.file}:{item.location.line}")


_ON_DUE = {"flag": "reconciler audit names them and exits 2", "revoke": "the plan revokes them",
           "keep": "they are kept"}


def render_status(status: CampaignStatus, fmt: str) -> str:
    """The status as ``text``, ``markdown`` or ``json``."""
    if fmt == "json":
        return json.dumps(status.model_dump(mode="json"), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(status)
    lines = [printable(_headline(status))]
    width = max((len(p.reviewer) for p in status.reviewers), default=0)
    lines += [printable(f"  {p.reviewer.ljust(width)}  {p.decided}/{p.total} decided ({p.kept} kept, "
                        f"{p.revoked} revoked){', file missing' if p.missing else ''}") for p in status.reviewers]
    if status.missing:
        lines.append(_missing_head(status))
        lines += [printable(f"  {o.location}: {o.kind} {o.key} ({o.role}) on {o.workspace}, {o.reviewer}")
                  for o in status.missing]
    if status.overdue:
        lines.append(_overdue_head(status))
        lines += [printable(f"  {o.location}: {o.kind} {o.key} ({o.role}) on {o.workspace}, {o.reviewer}")
                  for o in status.overdue]
    return "\n".join(lines) + "\n"


def _headline(status: CampaignStatus) -> str:
    closed = f", closed {status.closed.isoformat()}" if status.closed else ""
    return (f"Review {status.campaign} (due {status.due.isoformat()}, onDue {status.on_due}{closed}): "
            f"{status.decided} of {plural(status.total, 'item')} decided.")


def _missing_head(status: CampaignStatus) -> str:
    files = sorted({Path(o.location.rpartition(":")[0]).name for o in status.missing})
    return (f"Missing {plural(len(files), 'reviewer file')} ({', '.join(files)}): "
            f"{plural(len(status.missing), 'item')} read from git as review start wrote them, each undecided "
            "(put the file back, or reconciler review reassign them):")


def _overdue_head(status: CampaignStatus) -> str:
    return (f"Overdue since {status.due.isoformat()}: {plural(len(status.overdue), 'item')} undecided "
            f"(onDue {status.on_due}: {_ON_DUE[status.on_due]}):")


def _markdown(status: CampaignStatus) -> str:
    lines = [f"### {md_text(_headline(status))}", "", "| Reviewer | Decided | Kept | Revoked |", "|---|---|---|---|"]
    lines += [f"| {md_text(p.reviewer)}{' (file missing)' if p.missing else ''} | {p.decided}/{p.total} | {p.kept} "
              f"| {p.revoked} |" for p in status.reviewers]
    if status.missing:
        lines += ["", f"**{md_text(_missing_head(status))}**", ""]
        lines += [f"- {md_code(o.location)}: {md_text(f'{o.kind} {o.key} ({o.role}) on {o.workspace}, {o.reviewer}')}"
                  for o in status.missing]
    if status.overdue:
        lines += ["", f"**{md_text(_overdue_head(status))}**", ""]
        lines += [f"- {md_code(o.location)}: {md_text(f'{o.kind} {o.key} ({o.role}) on {o.workspace}, {o.reviewer}')}"
                  for o in status.overdue]
    return "\n".join(lines) + "\n"
