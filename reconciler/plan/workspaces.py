"""Plan the workspace side of a manifest: group membership, workspaces made
from templates, and the write-only section, page and task values of groups and
standalone workspaces (plan/standalone.py plans the latter's lists).

None of these can be read back from the service (membership is not a
workspace property; sections, pages and tasks have no list endpoint), so
each is compared with what the state recorded as last applied: what the
state does not know is sent, and ``reassert`` sends everything again.
Pure, like the rest of ``plan/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple

from reconciler.live import Live, LiveWorkspace
from reconciler.manifest import DesiredGroup, DesiredMember, DesiredWorkspace
from reconciler.plan.model import ApiCall, ConnectChange, CreateChange, SettingChange, SettingKind
from reconciler.plan.steps import Scope
from reconciler.state.model import State
from reconciler.vocabulary import WORKSPACE_CREATION


@dataclass
class MemberPlan:
    """The changes and warnings for a group's members, in manifest order."""

    joins: list[ConnectChange | CreateChange] = field(default_factory=list)
    settings: list[SettingChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def plan_members(group: DesiredGroup, live: Live, state: State, *, scope: Scope, reassert: bool) -> MemberPlan:
    """Connect or create each member, then its settings (which wait for the join)."""
    result = MemberPlan()
    for member in group.members:
        if not scope(member.address):
            continue
        join, workspace_id = _join(group, member, live, state, reassert=reassert, warnings=result.warnings)
        if join is not None:
            result.joins.append(join)
        if workspace_id is not None:
            after = (join.address,) if join is not None else ()
            result.settings += plan_settings(member, workspace_id, state, reassert=reassert, depends_on=after)
    return result


def _join(
    group: DesiredGroup, member: DesiredMember, live: Live, state: State, *, reassert: bool, warnings: list[str]
) -> tuple[ConnectChange | CreateChange | None, str | None]:
    """The change that puts ``member`` in the group, and its workspace id when known."""
    record = state.resources.get(member.address)
    if member.id is not None:
        known = record is not None and record.id == member.id and record.connected_to == group.homepage
        if known and not reassert:
            return None, member.id
        return _connect(group, member, member.id, live, known=known), member.id
    if record is None:
        homepage = live.workspaces.get(group.homepage)
        return _create(group, member, homepage.account_id if homepage is not None else None), None
    if record.id not in live.workspaces:
        warnings.append(
            f"{member.location}: {member.address}: the state binds it to workspace {record.id}, which the "
            f"service no longer has; nothing is planned for it. To create it again from {member.template}, "
            f"run 'reconciler state rm {member.address}'."
        )
        return None, None
    warnings += drift_warnings(member, live.workspaces[record.id])
    if record.connected_to == group.homepage and not reassert:
        return None, record.id
    return _connect(group, member, record.id, live, known=record.connected_to == group.homepage), record.id


def _connect(group: DesiredGroup, member: DesiredMember, workspace_id: str, live: Live, *, known: bool) -> ConnectChange:
    ws = live.workspaces.get(workspace_id)
    reason = ("re-asserted (--reassert)" if known else
              "not recorded as connected to this group (if it is already, the service changes nothing)")
    return ConnectChange(
        address=member.address,
        location=str(member.location),
        group=group.address,
        homepage_id=group.homepage,
        workspace_id=workspace_id,
        workspace_name=ws.name if ws else None,
        calls=(_connect_call(group.homepage),),
        reason=reason,
    )


def _create(group: DesiredGroup, member: DesiredMember, account_id: str | None) -> CreateChange:
    assert member.template is not None and member.name is not None  # validate requires both
    deal = member.deal
    return CreateChange(
        address=member.address,
        location=str(member.location),
        group=group.address,
        homepage_id=group.homepage,
        template_id=member.template,
        name=member.name,
        start_date=member.start_date,
        target_end_date=member.target_end_date,
        actual_end_date=member.actual_end_date,
        crm_one_deal_id=deal.crm_one_deal_id if deal else None,
        crm_two_opportunity_id=deal.crm_two_opportunity_id if deal else None,
        account_id=account_id,
        calls=(_connect_call(group.homepage),),
        reason="not in the state: created from the template (uses 1 workspace credit)",
    )


def _connect_call(homepage: str) -> ApiCall:
    return ApiCall(method="POST", path=f"/workspaces/{homepage}/connected-workspaces", limit_class=WORKSPACE_CREATION)


def plan_settings(
    node: DesiredMember | DesiredWorkspace,
    workspace_id: str,
    state: State,
    *,
    reassert: bool,
    depends_on: tuple[str, ...] = (),
) -> list[SettingChange]:
    """One change per section, page or task whose value the state does not
    record as written (all of them with ``reassert``)."""
    record = state.resources.get(node.address)
    if record is not None and record.id != workspace_id:
        record = None  # the address now names another workspace: nothing is known of it
    changes = []
    for kind, item_id, value, location in _settings(node):
        before = record.setting(kind, item_id) if record is not None else None
        if before == value and not reassert:
            continue
        changes.append(SettingChange(
            kind=kind,
            address=f"{node.address}.{kind}.{item_id}",
            location=location,
            depends_on=depends_on,
            workspace_address=node.address,
            workspace_id=workspace_id,
            item_id=item_id,
            before=before,
            after=value,
            calls=(ApiCall(method="PATCH", path=f"/workspace-{_path(kind)}/{item_id}"),),
            reason=_setting_reason(before, value, reassert),
        ))
    return changes


def _settings(node: DesiredMember | DesiredWorkspace) -> Iterator[tuple[SettingKind, str, bool, str]]:
    for s in node.sections:
        yield "section", s.id, s.hidden, str(s.location)
    for p in node.pages:
        yield "page", p.id, p.hidden, str(p.location)
    for t in node.tasks:
        yield "task", t.id, t.completed, str(t.location)


def _path(kind: str) -> str:
    return {"section": "sections", "page": "pages", "task": "plan-tasks"}[kind]


def _setting_reason(before: bool | None, after: bool, reassert: bool) -> str:
    if before is None:
        return "not recorded in the state (the service cannot read it back)"
    if before == after:
        return "re-asserted (--reassert)" if reassert else ""
    return "the manifest changed since it was last applied"


def drift_warnings(member: DesiredMember, ws: LiveWorkspace) -> list[str]:
    """What differs in the fields the API cannot change after creation."""
    deal = member.deal
    fields = (
        ("name", ws.name, member.name),
        ("startDate", ws.start_date, _iso(member.start_date)),
        ("targetEndDate", ws.target_end_date, _iso(member.target_end_date)),
        ("actualEndDate", ws.actual_end_date, _iso(member.actual_end_date)),
        ("deal.crmOneDealId", ws.crm_one_deal_id, deal.crm_one_deal_id if deal else None),
        ("deal.crmTwoOpportunityId", ws.crm_two_opportunity_id, deal.crm_two_opportunity_id if deal else None),
    )
    return [
        f"{member.location}: {member.address}: {name} is {live!r} in the service, {want!r} in the manifest; "
        f"the API cannot change it after creation, so reconciler leaves it (change it in the web app, "
        f"or in the manifest to silence this)."
        for name, live, want in fields
        if want is not None and live != want
    ]


class Identity(NamedTuple):
    """What makes a workspace the one a creation made: the service gives a
    creation no key of ours, so a workspace of the same account, template and
    name is taken to be it."""

    account_id: str | None
    template_id: str | None
    name: str | None


def namesakes(workspaces: Iterable[tuple[str, Identity]], known: Callable[[str], bool]) -> dict[Identity, list[str]]:
    """The workspaces the state does not know, by identity: the one rule of
    "the same workspace", read by the plan (a creation an earlier apply may
    have made) and by apply (a creation whose answer was lost)."""
    found: dict[Identity, list[str]] = {}
    for workspace_id, identity in workspaces:
        if not known(workspace_id):
            found.setdefault(identity, []).append(workspace_id)
    return found


def _iso(value: date | None) -> str | None:
    """A date as the service writes it (the live side keeps the service's strings)."""
    return None if value is None else value.isoformat()
