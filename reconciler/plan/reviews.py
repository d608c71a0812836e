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

A revoke with ``removeFromTeam: true`` of an entry a team of the
workspace's list grants takes the person out of that team (``review close``
removes them from it): ``leaving`` records each (person, team) with the
review as the source, and the company planner drops that team's grant of
them on every list, before close as after.  Where another reviewer kept the
person on another list through that team, neither decision is carried out
and the conflict is named (``review close`` refuses it the same way:
``reconciler.manifest.review_meaning.keeps_against_leaving``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import NamedTuple

from reconciler.live import Live
from reconciler.manifest.desired import AccessList, Desired, DesiredCampaign, DesiredTeam, ReviewItem
from reconciler.manifest.review_meaning import Entry, deciding_items, keeps_against_leaving
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
    # (email, team) -> the review (campaign, reviewer, the decision's line) that takes the person out of the team
    leaving: dict[tuple[str, str], GrantSource]
    conflicts: list[str]  # a removal from a team against another reviewer's keep: warnings, neither carried out


# Workspace id -> (address, list) of every list a manifest names.
Lists = Mapping[str, tuple[str, AccessList]]


def named_lists(desired: Desired, member_id: Callable[[str], str | None]) -> dict[str, tuple[str, AccessList]]:
    """Workspace id -> (address, list) of every list a manifest names: a group's on its homepage and each
    member (``member_id``: a member's address -> its recorded workspace id), a standalone workspace's."""
    return {workspace_id: (node.address, node.access) for workspace_id, node in desired.list_holders(member_id)
            if node.access is not None}


def review_outcome(campaigns: Sequence[DesiredCampaign], live: Live, today: date | None, lists: Lists | None = None,
                   teams: Mapping[str, DesiredTeam] | None = None) -> ReviewOutcome:
    """What every campaign's decisions do to ``live`` (a complete listing) on ``today`` (UTC); ``lists``
    (``named_lists``) and ``teams`` to read what a ``removeFromTeam`` revoke takes the person out of."""
    revocations: dict[str, list[ReviewRevocation]] = {}
    stale: list[str] = []
    leaving: dict[tuple[str, str], GrantSource] = {}
    conflicts: list[str] = []
    for campaign in campaigns:
        overdue = today is not None and campaign.overdue(today)
        deciding = deciding_items(campaign.items)
        for item in deciding.values():
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
            if problem is not None and problem != _GONE:
                stale.append(_stale_text(item, problem, acted=True))
                continue
            source = GrantSource("review", item.location, campaign=campaign.name, reviewer=item.reviewer, due=due)
            if item.remove_from_team and item.decision == "revoke" and lists:
                left, clashes = _teams_left(item, campaign, deciding, lists, teams or {})
                if clashes:
                    conflicts += clashes  # neither decision is carried out, the team's grant stays
                    continue
                for team in left:
                    leaving.setdefault((item.key, team), source)
            if problem == _GONE:
                continue
            revocations.setdefault(item.workspace, []).append(
                ReviewRevocation(item.workspace, item.kind, item.key, source))
    return ReviewOutcome(revocations, stale, leaving, conflicts)


def _teams_left(item: ReviewItem, campaign: DesiredCampaign, deciding: Mapping[Entry, ReviewItem], lists: Lists,
                teams: Mapping[str, DesiredTeam]) -> tuple[list[str], list[str]]:
    """The teams of the item's list that ``removeFromTeam`` takes its person out of, as ``review close`` reads
    them: those holding them while the campaign is open, those that no longer do once it is closed (close took
    them out); none when an entry of the list names them (close removes that line instead).  And the
    conflicts with another reviewer's keep that stop it (open campaign)."""
    if item.kind != "user" or item.workspace not in lists:
        return [], []
    _, access = lists[item.workspace]
    if any(entry.email == item.key for entry in access.users):
        return [], []
    left: list[str] = []
    clashes: list[str] = []
    for ref in access.teams:
        team = teams.get(ref.team)
        member = next((m for m in team.members if m.email == item.key), None) if team is not None else None
        if campaign.closed is not None:
            if team is not None and member is None:
                left.append(ref.team)
            continue
        if member is None:
            continue
        kept = keeps_against_leaving(item, ref.team, deciding, lists)
        clashes += [f"{item.location}: review {item.campaign}: {item.reviewer} revokes user {item.key} on "
                    f"{item.workspace} with removeFromTeam: true, which takes them out of team {ref.team} "
                    f"({member.location}) and so off {where} too, where {other.reviewer} decided keep on "
                    f"{other.workspace} ({other.location}): neither is carried out; decide one of them again "
                    "(keep on both, or revoke on both)" for other, where in kept]
        left.append(ref.team)
    return left, clashes


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
