"""The reviewers' decisions as the plan carries them out.

Each item of a campaign (``reconciler.manifest.reviews``) names one entry
(user or domain) on one workspace with the role it had when the campaign
started.  Which item decides an entry several reviewers hold (a workspace's
two owners) is ``reconciler.manifest.review_meaning``'s (a ``revoke`` from
any of them, then a ``keep``).  An entry nobody decided follows the
campaign's ``onDue`` once the due date has passed: ``revoke`` revokes it
(``not reviewed by <due>``), ``flag`` leaves it to ``reconciler audit``,
``keep`` keeps it.

A decision is carried out only while the entry is as the reviewer saw it: an
entry whose role changed since the snapshot is a stale decision, reported and
not acted on (the reviewer judged another grant); one already gone needs
nothing more for a revoke, and a keep of it is reported while the campaign is
open.  The result is, per workspace, revocations shaped as a rule's
``revoke`` scoped to that one workspace (``GrantSource`` kind ``review``),
which ``reconciler.plan.company`` merges into the list the workspace holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import NamedTuple

from reconciler.live import Live
from reconciler.manifest.desired import DesiredCampaign, ReviewItem
from reconciler.manifest.review_meaning import deciding_items
from reconciler.plan.teams import GrantSource


class ReviewRevocation(NamedTuple):
    """One entry a review takes away from one workspace."""

    workspace: str
    kind: str  # user or domain
    key: str
    source: GrantSource  # kind "review": campaign, reviewer, the decision's line; ``due`` when not reviewed


class ReviewOutcome(NamedTuple):
    revocations: dict[str, list[ReviewRevocation]]  # workspace id -> what the reviews revoke there
    stale: list[str]  # warnings, each at the decision's line


def review_outcome(campaigns: Sequence[DesiredCampaign], live: Live, today: date | None) -> ReviewOutcome:
    """What every campaign's decisions do to ``live`` (a complete listing) on ``today`` (UTC)."""
    revocations: dict[str, list[ReviewRevocation]] = {}
    stale: list[str] = []
    for campaign in campaigns:
        overdue = today is not None and campaign.overdue(today)
        for item in deciding_items(campaign.items).values():
            due: str | None = None
            if item.decision is None:
                if not overdue or campaign.on_due != "revoke":
                    continue
                due = campaign.due.isoformat()
            problem = _staleness(item, live)
            if item.decision == "keep":
                if problem is not None and campaign.closed is None:
                    stale.append(_stale_text(item, problem, acted=False))
                continue
            if problem == _GONE:
                continue
            if problem is not None:
                stale.append(_stale_text(item, problem, acted=True))
                continue
            source = GrantSource("review", item.location, campaign=campaign.name, reviewer=item.reviewer, due=due)
            revocations.setdefault(item.workspace, []).append(
                ReviewRevocation(item.workspace, item.kind, item.key, source))
    return ReviewOutcome(revocations, stale)


_GONE = "gone"


def _staleness(item: ReviewItem, live: Live) -> str | None:
    """None when the entry is as the snapshot says; ``_GONE`` when it is no longer there; else its role now."""
    workspace = live.workspaces.get(item.workspace)
    if workspace is None:
        return _GONE
    entry = (workspace.users if item.kind == "user" else workspace.domains).get(item.key)
    if entry is None:
        return _GONE
    return None if entry.role == item.role else entry.role


def _stale_text(item: ReviewItem, problem: str, *, acted: bool) -> str:
    decided = f"{item.decision} by {item.reviewer}" if item.decision else f"not reviewed by {item.reviewer}"
    if problem == _GONE:
        now = "has been removed since the review started"
    else:
        now = f"is {problem} in the service, {item.role} when the review started"
    tail = "; not acted on: decide it again in a new review" if acted else ""
    return (f"{item.location}: review {item.campaign}: stale decision ({decided}): {item.kind} {item.key} on "
            f"{item.workspace} {now}{tail}")
