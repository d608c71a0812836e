"""What the planner refuses, before any call, with the manifest location that caused it.

Two moments: before planning, inputs that cannot be planned safely (a
workspace the service does not have, a member of another account, a rule's
``except`` id no workspace has); after planning, two lists of the manifests
on one list the service shares wanting different entries on it
(``plan/merge.py`` refuses two changes of one entry that differ), and a plan that would leave an access list without an owner.  A creation a lost answer may already have
made is not refused: it alone waits for a person (``intents.py``), and the
rest of the plan goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from reconciler.errors import PlanError
from reconciler.manifest import Desired, DesiredGroup, DesiredRule
from reconciler.plan.agreement import Disagreement, described
from reconciler.plan.handover import ownerless_problems
from reconciler.plan.model import AccessChange, Change, ConnectChange
from reconciler.plan.reviews import ReviewRevocation
from reconciler.plan.steps import Inputs
from reconciler.text import quoted

_MISSING = "does not exist, or the company this token belongs to cannot see it."


def refuse_unplannable(desired: Desired, inputs: Inputs) -> None:
    """Refuse, naming each cause, a manifest that names workspaces the
    service does not have."""
    problems = unknown_workspaces(desired, inputs)
    if inputs.live.complete:  # which ids exist can be told only from the complete listing
        problems += unknown_exceptions(desired, inputs.live.workspaces.keys())
    if problems:
        raise PlanError(join("The plan cannot be made:", problems))


def refuse_disagreements(disagreeing: Sequence[Disagreement]) -> None:
    """Refuse two lists of the manifests whose workspaces the service holds
    as one list (connected by hand; the API never says so) when the list the
    plan leaves does not satisfy one of them (``plan/agreement.py``: the next
    plan would undo the write).  Their writes are one already
    (``plan/merge.py``, which refuses two of them changing one entry differently)."""
    if disagreeing:
        raise PlanError(join("The plan cannot be made:", [described(d) for d in disagreeing]))


def unknown_exceptions(desired: Desired, known: Collection[str]) -> list[str]:
    """Every ``except`` id of a rule that no workspace of the company has:
    validate cannot know the ids, and a typo there would let the rule reach
    the very workspace it was meant to spare."""
    import difflib

    from reconciler.plan.lookalikes import skeleton

    problems = []
    for rule in desired.rules:
        lines = rule.match.except_locations
        for i, workspace_id in enumerate(rule.match.except_ids):
            if workspace_id in known:
                continue
            where = lines[i] if i < len(lines) else rule.match.location
            # A look-alike first (ws_u1l for ws_u11), then the closest spelling.
            close = [k for k in sorted(known) if skeleton(k) == skeleton(workspace_id)] or \
                difflib.get_close_matches(workspace_id, sorted(known), n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]}?" if close else ""
            problems.append(f"{where}: rules.{rule.key}: except names workspace {quoted(workspace_id)}, which the "
                            "company has no workspace with, so the rule would reach the workspace it was meant to "
                            f"spare.{hint}")
    return problems


def refuse_ownerless(changes: Iterable[Change], rules: Sequence[DesiredRule] = ()) -> None:
    """Refuse a plan that would leave an access list with no owner, naming
    the owner a rule revokes and the ways out (``plan/handover.py``)."""
    orphaned = ownerless_problems([c for c in changes if isinstance(c, AccessChange) and not c.after.owners()],
                                  rules)
    if orphaned:
        raise PlanError(join("The plan is refused: it would leave access lists without an owner.", orphaned))


def unknown_workspaces(desired: Desired, inputs: Inputs) -> list[str]:
    """Every workspace in scope the service does not show, and every member
    of another account than its homepage (the service connects only within one)."""
    problems = []
    for group in desired.groups:
        if inputs.scope(group.address) or any(inputs.scope(m.address) for m in group.members):
            problems += _group_problems(group, inputs)
    for ws in desired.workspaces:
        if inputs.scope(ws.address) and ws.id not in inputs.live.workspaces:
            where = ws.access.location if ws.access is not None else ws.location
            problems.append(f"{where}: {ws.address}: workspace {ws.id} {_MISSING}")
    return problems


def _group_problems(group: DesiredGroup, inputs: Inputs) -> list[str]:
    live = inputs.live.workspaces
    problems = []
    where = group.access.location if group.access is not None else group.location
    homepage = live.get(group.homepage)
    if homepage is None:
        problems.append(f"{where}: {group.address}: workspace {group.homepage} {_MISSING}")
    for member in group.members:
        if member.id is None or not inputs.scope(member.address):
            continue
        ws = live.get(member.id)
        if ws is None:
            problems.append(f"{member.location}: {member.address}: workspace {member.id} {_MISSING}")
        elif homepage is not None and ws.account_id != homepage.account_id:
            problems.append(
                f"{member.location}: {member.address}: workspace {member.id} belongs to account "
                f"{ws.account_id}, the homepage {group.homepage} to {homepage.account_id}; the service "
                "connects only workspaces of the same account."
            )
    return problems


def join(head: str, problems: list[str]) -> str:
    """One message: the head, then each problem on its own indented line."""
    return "\n".join([head, *(f"  {p}" for p in problems)])


def refuse_reviews_of_joined(joins: Sequence[ConnectChange],
                             revocations: Callable[[str], Sequence[ReviewRevocation]]) -> None:
    """Refuse a review's revocation on a workspace this plan connects onto another list (a join).

    The reviewer judged the entry on the list the workspace held; once joined, it holds the group's list,
    which the review never saw.  Carried out on the old list, the revocation is undone by the join, and the
    next plan would carry it out on the group's list, reaching every workspace of it: a plan that does not
    settle, and a decision applied where nobody made it."""
    problems = []
    for connect in joins:
        for revocation in revocations(connect.workspace_id):
            source = revocation.source
            by = f"review {source.campaign}" + (f" by {source.reviewer}" if source.reviewer else
                                                 f" (not reviewed by {source.due})")
            problems.append(
                f"{source.location}: {by} revokes {revocation.kind} {revocation.key} on {connect.workspace_id}, and "
                f"this plan connects {connect.workspace_id} into {connect.group} ({connect.location}): the workspace will "
                "hold the group's list, which the review did not see, so the revocation cannot hold as it was "
                "decided. Keep the workspace out of the group in the manifest until the campaign is closed and "
                "applied, or decide the item keep (a new review can judge the group's list).")
    if problems:
        raise PlanError(join("The plan cannot be made:", problems))
