"""Creating a workspace from a template, write-ahead: the intent journaled before the call, the new id
recorded after it, and an answer lost on the way resolved by listing, never by sending it again.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from reconciler.api.bodies import CreateFromTemplate
from reconciler.api.errors import (
    ApiError,
    NotReadyInTime,
    UploadExpired,
)
from reconciler.api.models import Workspace
from reconciler.errors import ApplyError
from reconciler.live import ACCESS_PROPERTIES, read_workspace
from reconciler.plan.model import (
    CreateChange,
)
from reconciler.plan.workspaces import Identity, namesakes
from reconciler.apply.proof import check_lists, snapshot_of
from reconciler.apply.recording import Run, record_list
from reconciler.apply.writes import AMBIGUOUS, access_inputs
from reconciler.state import CreationIntent, ResourceState, StateWriteError

if TYPE_CHECKING:  # pragma: no cover
    pass


# Properties read back from a creation: the new id, and the lists it carries.
CREATED_PROPERTIES = ("name", "templateId", *ACCESS_PROPERTIES[1:])
LOOKUP_PROPERTIES = ("name", "accountId", "templateId")


def create_workspace(run: Run, change: CreateChange) -> None:
    """Create from the template and record the new id.

    The intent is recorded (journaled, fsynced) before the call: if the
    process dies before the answer is recorded, the next plan finds the
    workspace by it and adopts it.  A creation is never sent twice: after an
    answer that leaves it open (5xx, lost connection) the workspaces are
    listed and one of this account, template and name that the state does
    not know is taken as the one just created.
    """
    _record_intent(run, change)
    users, domains = access_inputs(change.access) if change.access is not None else (None, None)
    body = CreateFromTemplate(
        templateId=change.template_id,
        name=change.name,
        startDate=change.start_date,
        targetEndDate=change.target_end_date,
        actualEndDate=change.actual_end_date,
        crmOneDealId=change.crm_one_deal_id,
        crmTwoOpportunityId=change.crm_two_opportunity_id,
        workspaceUsers=tuple(users) if users is not None else None,
        workspaceDomains=tuple(domains) if domains is not None else None,
    )
    try:
        created = run.client.connect_workspace(change.homepage_id, body, properties=CREATED_PROPERTIES).workspace
    except AMBIGUOUS as exc:
        workspace_id = _find_created(run, change, exc)  # none found: the intent is closed, the apply stops
        run.say(f"{change.address}: the answer was lost, but workspace {workspace_id} was created; recorded")
        _record_created(run, change, workspace_id)
        return
    except (ApiError, UploadExpired, NotReadyInTime) as refused:
        _close_intent(run, change, refused)  # refused outright: nothing was made
        raise
    run.say(f"{change.address}: created workspace {created.id}")
    if change.access is not None:
        try:
            check_lists(change.address, f"POST /workspaces/{change.homepage_id}/connected-workspaces",
                         change.access, snapshot_of(read_workspace(created)))
        except ApplyError:
            # The workspace exists (its credit is spent) whatever its list is:
            # its id is recorded before the apply stops, so the next plan
            # knows it instead of asking for an 'import' by hand.
            run.state.bind(change.address, created.id, connected_to=change.homepage_id,
                           template=change.template_id, name=change.name)
            run.save()
            raise
    _record_created(run, change, created.id)


def _record_intent(run: Run, change: CreateChange) -> None:
    """Journal what is about to be created, and when, before the call (write-ahead)."""
    at = datetime.datetime.fromtimestamp(run.client.clock.now(), datetime.UTC)
    intent = CreationIntent(at=at.isoformat(timespec="seconds").replace("+00:00", "Z"), name=change.name,
                            account=change.account_id, template=change.template_id, group=change.group,
                            homepage=change.homepage_id)
    run.state.put(change.address, ResourceState(id="", intent=intent))
    try:
        run.save()
    except StateWriteError as exc:
        raise ApplyError(f"Apply stopped at {change.address} ({change.location}) before its creation was sent: "
                         f"{exc.noun} could not record the intent to create it. {exc} {exc.remedy}, then run "
                         "'reconciler apply' again.") from exc


def _close_intent(run: Run, change: CreateChange, cause: Exception) -> None:
    """The creation was not made (``cause`` says why): its intent goes, recorded before the apply stops.
    A state that cannot record that is said as it is: nothing was created (not "partly made")."""
    run.state.remove(change.address)
    try:
        run.save()
    except StateWriteError as exc:
        raise ApplyError(
            f"Apply stopped at {change.address} ({change.location}): {cause} Nothing was created, but "
            f"{exc.noun} could not remove the intent recorded before the creation was sent. {exc} {exc.remedy}, "
            "then run 'reconciler apply' again: the intent finds no such workspace, and is closed.") from exc


def _record_created(run: Run, change: CreateChange, workspace_id: str) -> None:
    run.state.bind(change.address, workspace_id, connected_to=change.homepage_id, template=change.template_id,
                   name=change.name)
    if change.access_address is not None:
        record_list(run.state, run.managed[change.access_address], run.today())


def _find_created(run: Run, change: CreateChange, exc: ApiError) -> str:
    listed = list(run.client.list_workspaces(properties=LOOKUP_PROPERTIES))
    account = next((w.accountId for w in listed if w.id == change.homepage_id), None)
    found = namesakes(((w.id, Identity(w.accountId, w.templateId, w.name)) for w in listed),
                      run.state.knows_id).get(Identity(account, change.template_id, change.name), [])
    if len(found) == 1:
        return found[0]
    if not found:
        _close_intent(run, change, exc)
        raise ApplyError(
            f"Apply stopped at {change.address} ({change.location}): {exc} "
            f"{_no_new_namesake(run, change, listed, account)} Run 'reconciler apply' again."
        ) from exc
    raise ApplyError(
        f"Apply stopped at {change.address} ({change.location}): {exc} Several workspaces named "
        f"\"{change.name}\" from template {change.template_id} that the state does not know exist "
        f"({', '.join(found)}); adopt the right one with 'reconciler import {change.address} ID'."
    ) from exc


def _no_new_namesake(run: Run, change: CreateChange, listed: list[Workspace], account: str | None) -> str:
    """Why nothing was created: no workspace of that name and template, or
    only ones the state binds to other addresses (said so, by address: one
    of them may be the workspace meant, adopted under an old address)."""
    named = f"\"{change.name}\" from template {change.template_id}"
    bound = [w.id for w in listed if Identity(w.accountId, w.templateId, w.name)
             == Identity(account, change.template_id, change.name) and run.state.knows_id(w.id)]
    if not bound:
        return f"No workspace named {named} exists, so none was created and no credit was used."
    addresses = {r.id: a for a, r in run.state.items() if r.id}
    where = ", ".join(f"{wid}, bound to {addresses.get(wid)}" for wid in bound)
    return (f"No new workspace named {named} exists, so none was created and no credit was used (of that name "
            f"there is only {where} in the state). If that is the workspace meant for {change.address}, bind it "
            f"there: 'reconciler state rm {addresses.get(bound[0])}' and 'reconciler import {change.address} "
            f"{bound[0]}'.")
