"""What apply says when it stops: what was done, what may have been, what was not, and why the
service refused (one sentence each); and the resources only a person can settle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.api.errors import (
    Conflict,
    Forbidden,
    NotFound,
    NotReadyInTime,
)
from reconciler.errors import ReconcilerError
from reconciler.plan.model import (
    AssetChange,
    Change,
    ConnectChange,
    CreateChange,
    Plan,
    SettingChange,
)
from reconciler.plan.render_text import needs_person_lines
from reconciler.apply.recording import ApplyResult
from reconciler.state import StateWriteError
from reconciler.text import plural, printable

if TYPE_CHECKING:  # pragma: no cover
    pass


def needs_person_message(plan: Plan, result: ApplyResult) -> str:
    done = (f"Apply made every other change (the plan's {plural(result.changed, 'change')}, in "
            f"{plural(result.calls, 'API call')})" if result.changed else "Apply had nothing else to change")
    lines = needs_person_lines(plan, lambda text, _style: printable(text))
    return (f"{done}, but {lines[0][0].lower()}{lines[0][1:]}\n" + "\n".join(lines[1:])
            + "\nThen run 'reconciler plan' again.")


def unrecorded_message(change: Change, exc: StateWriteError, done: int, plan: Plan, *, whole: bool) -> str:
    """The service was changed and the state could not say so: name what. ``whole``: the change was made
    whole; otherwise the state failed within it, which for an asset is between its steps."""
    partly = not whole and isinstance(change, AssetChange)
    made = "was partly made in the service (an asset's steps)" if partly else "was made in the service"
    before = done - 1 if whole else done
    return (
        f"Apply stopped: {change.address} ({change.location}) {made}, but {exc.noun} could not record it. "
        f"{exc} The state records the {plural(before, 'change')} before it; "
        f"{_not_attempted(len(plan.changes) - before - 1)}. {exc.remedy}, then run 'reconciler "
        "plan': access lists are read live, and a workspace created here is found again by the intent recorded "
        "before its creation, and adopted."
    )


def _not_attempted(n: int) -> str:
    """``the 2 changes after it were not attempted``, in the right number."""
    if n == 0:
        return "no change came after it"
    return f"the {plural(n, 'change')} after it {'was' if n == 1 else 'were'} not attempted"


def stopped_message(change: Change, exc: ReconcilerError, done: int, plan: Plan, *, made: str = "") -> str:
    """What was done, what may have been, and what was not: one sentence each."""
    total = len(plan.changes)
    before = ("None of the plan's changes was made before this one." if done == 0 else
              f"{done} of the plan's {plural(total, 'change')} {'was' if done == 1 else 'were'} made before this "
              f"one; the service keeps {'it' if done == 1 else 'them'} and the state records "
              f"{'it' if done == 1 else 'them'}.")
    if made:
        this = f"Of this change, {made} before the failure."
    elif getattr(exc, "outcome", ""):
        this = "This change may or may not have been made (its answer was lost)."
    else:
        this = "This change was not made."
    return (
        f"Apply stopped at {change.address} ({change.location}): {exc}{_cause(change, exc, plan)} {before} "
        f"{this} {_not_attempted(total - done - 1).capitalize()}. "
        f"Run 'reconciler plan' to see what remains."
    )


def _cause(change: Change, exc: ReconcilerError, plan: Plan) -> str:
    """What a refusal means for this kind of change, in the service's terms."""
    if isinstance(change, ConnectChange) and isinstance(exc, Conflict):
        return (f" Workspace {change.workspace_id} is already in another group (or belongs to another "
                f"account). The API cannot disconnect a workspace; that happens in the web app: disconnect "
                f"it there, or take it out of {change.group} in the manifest.")
    if isinstance(change, CreateChange) and isinstance(exc, Forbidden):
        count = f"{plan.live_workspaces} workspaces" if plan.live_workspaces is not None else "an unknown number"
        return (f" The service refuses new workspaces for two documented reasons: the company is on the "
                f"free plan, which allows 10 workspaces in total, active and archived (it had {count} when "
                f"the plan was made), or the company is not verified, and only verified companies may "
                f"publish workspaces. A company without workspace credits left is refused too.")
    if isinstance(change, CreateChange) and getattr(exc, "status", None) == 400:
        return (f" Check that template {change.template_id} exists for this company and whether it needs "
                f"a deal (crmOneDealId or crmTwoOpportunityId of the group account's CRM company).")
    if isinstance(change, SettingChange) and isinstance(exc, NotFound):
        return (f" The service has no {change.kind} {change.item_id}: check the id in the manifest "
                f"(it belongs to workspace {change.workspace_id}).")
    refused = getattr(exc, "status", None) == 400 or isinstance(exc, NotReadyInTime)
    if isinstance(change, AssetChange) and change.tags and refused:
        return (f" Check that the tags {', '.join(change.tags)} exist for this company (the service "
                "answers 400 for an unknown tag id).")
    return ""
