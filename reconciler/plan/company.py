"""Teams and rules in the plan: every list expanded, every workspace governed.

``CompanyPlanner`` is the planner's one entry point to governance:

- ``list_change`` plans a manifest's access list with its teams expanded
  and the rules matching any of its workspaces merged in (a group's list is
  on every member, so a rule matching one member changes the shared list,
  and the change's ``reach`` names every workspace it is on);
- ``unmanaged_changes`` plans the workspaces no manifest's list governs:
  there a rule is non-authoritative, adding or re-roling its ``ensure``
  entries and removing its ``revoke`` entries, and nothing else.  The
  state remembers (``unmanaged.<workspace id>``) what the rules put on each,
  so an entry taken out of ``ensure`` is removed where a rule put it, and
  nowhere else.

Each entry change carries its ``source`` (explicit entry, team, rule): what
grants it, or what takes it away.  Manifests without teams and rules take
the planner's own path, untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date

from reconciler.errors import PlanError
from reconciler.live import Live, LiveWorkspace
from reconciler.manifest.desired import (
    AccessList,
    Desired,
    DesiredGroup,
    DesiredRule,
    DomainAccess,
    UserAccess,
)
from reconciler.manifest.location import SourceLocation
from reconciler.plan.access import plan_access
from reconciler.plan.model import AccessChange, Action, EntryChange, EntrySource, ManagedAccess
from reconciler.plan.reviews import ReviewRevocation, review_outcome
from reconciler.plan.rules import rule_matches
from reconciler.plan.teams import ExpandedAccess, Grant, GrantSource, expand_access
from reconciler.state.model import AccessRecord, State

UNMANAGED = "unmanaged"


def unmanaged_address(workspace_id: str) -> str:
    """The address of the rules' entries on a workspace no manifest's list governs."""
    return f"{UNMANAGED}.{workspace_id}"


class CompanyPlanner:
    """Governance for one plan: built once, asked per list, then for the rest of the company."""

    def __init__(self, desired: Desired, live: Live, state: State, *, today: date | None,
                 member_id: Callable[[str], str | None]) -> None:
        self._live = live
        self._state = state
        self._today = today
        self._member_id = member_id  # a member's address -> its workspace id (declared or recorded)
        self._desired = desired
        self.teams = {t.key: t for t in desired.teams}
        self.rules = desired.rules
        self.active = (bool(desired.teams or desired.rules or desired.reviews)
                       or any(a.teams for _, _, a in desired.access_lists()))
        self._expanded: dict[str, ExpandedAccess] = {}
        self.unmanaged_managed: list[ManagedAccess] = []
        # Access reviews' revocations (plan/reviews.py), merged into the list each workspace holds.
        self._reviews = review_outcome(desired.reviews, live, today) if desired.reviews else None
        self._review_conflicts: list[str] = []

    # --- manifest lists ---------------------------------------------------------------------

    def group_workspaces(self, group: DesiredGroup, probable: Sequence[str]) -> list[LiveWorkspace]:
        """The group's workspaces as rules see them: the homepage, its members
        (one this plan creates, by the name, template and account it will
        have) and those probably connected by hand."""
        found: list[LiveWorkspace] = []
        homepage = self._live.workspaces.get(group.homepage)
        if homepage is not None:
            found.append(homepage)
        for member in group.members:
            workspace_id = self._member_id(member.address) if member.id is None else member.id
            if workspace_id is not None and workspace_id in self._live.workspaces:
                found.append(self._live.workspaces[workspace_id])
            elif member.template is not None and workspace_id is None:
                found.append(LiveWorkspace(id="", name=member.name, template_id=member.template,
                                           account_id=homepage.account_id if homepage is not None else None))
        found += [self._live.workspaces[w] for w in probable if w in self._live.workspaces]
        return found

    def rules_for(self, workspaces: Iterable[LiveWorkspace]) -> tuple[DesiredRule, ...]:
        """The rules matching any of ``workspaces``, in manifest order."""
        if not self.rules:
            return ()
        spaces = list(workspaces)
        return tuple(r for r in self.rules if any(rule_matches(r, ws) for ws in spaces))

    def list_change(self, address: str, workspace_id: str, access: AccessList,
                    workspaces: Iterable[LiveWorkspace]) -> AccessChange | None:
        """The change of a manifest's list, its teams and matching rules included."""
        if not self.active:
            return plan_access(address, workspace_id, access, self._live, self._state, self._today)
        spaces = list(workspaces)
        expanded = self._with_reviews(expand_access(access, self.teams, self.rules_for(spaces)), spaces)
        self._expanded[address] = expanded
        change = plan_access(address, workspace_id, _flat(access, expanded), self._live, self._state,
                                 self._today, revoked=(expanded.revoked_users, expanded.revoked_domains))
        if change is None:
            return None
        return _explained(change, expanded, self._state.access_record(address))

    def managed(self, address: str, workspace_id: str, access: AccessList) -> ManagedAccess:
        """What the state records for a list after apply: every entry the list
        grants, teams and rules included, and which came from a team or rule."""
        expanded = self._expanded.get(address)
        if expanded is None:
            return ManagedAccess(address=address, workspace_id=workspace_id,
                                 users={u.email: u.role for u in access.users},
                                 domains={d.domain: d.role for d in access.domains})
        return ManagedAccess(address=address, workspace_id=workspace_id, users=expanded.user_roles(),
                             domains=expanded.domain_roles(), via=_via(expanded))

    def listed(self, address: str, access: AccessList) -> set[tuple[str, str]]:
        """(kind, key) of every entry the list manages: granted (teams and rules
        included) or revoked by a rule."""
        expanded = self._expanded.get(address)
        if expanded is None:
            return {("user", u.email) for u in access.users} | {("domain", d.domain) for d in access.domains}
        return ({("user", k) for k in (*expanded.users, *expanded.revoked_users)}
                | {("domain", k) for k in (*expanded.domains, *expanded.revoked_domains)})

    # --- the rest of the company ------------------------------------------------------------

    def unmanaged_changes(self, governed: Collection[str], groups_without_list: Mapping[str, Sequence[str]],
                          in_scope: Callable[[str], bool]) -> list[AccessChange]:
        """The rules' changes on every workspace no manifest's list governs.

        ``governed``: the ids a manifest's list is on (homepages, members,
        probable members, standalone workspaces with a list).
        ``groups_without_list``: homepage -> the group's other workspaces, for
        a group the manifests name without a list: one list, planned once on
        the homepage with the rules matching any of its workspaces.
        Needs the complete listing; records what the rules put on each
        workspace in ``unmanaged_managed``.
        """
        if not self._live.complete or (not self.rules and not self._recorded_unmanaged()
                                        and not (self._reviews and self._reviews.revocations)):
            return []
        skip = set(governed) | {m for members in groups_without_list.values() for m in members}
        changes: list[AccessChange] = []
        for ws in self._live.workspaces.values():
            if ws.id in skip or not in_scope(unmanaged_address(ws.id)):
                continue
            spaces = [ws, *(self._live.workspaces[m] for m in groups_without_list.get(ws.id, ())
                            if m in self._live.workspaces)]
            change = self._unmanaged(ws.id, self.rules_for(spaces), spaces)
            if change is not None:
                changes.append(change)
        return changes

    def _recorded_unmanaged(self) -> bool:
        return any(a.startswith(f"{UNMANAGED}.") for a in self._state.resources)

    def _unmanaged(self, workspace_id: str, rules: tuple[DesiredRule, ...],
                   spaces: Sequence[LiveWorkspace]) -> AccessChange | None:
        address = unmanaged_address(workspace_id)
        record = self._state.access_record(address)
        expanded = self._with_reviews(expand_access(None, self.teams, rules), spaces)
        reviewed = [s for s in (*expanded.revoked_users.values(), *expanded.revoked_domains.values())
                    if s.kind == "review"]
        if not rules and record is None and not reviewed:
            return None
        # Recorded even when empty: apply then forgets the address.
        self.unmanaged_managed.append(ManagedAccess(
            address=address, workspace_id=workspace_id, users=expanded.user_roles(),
            domains=expanded.domain_roles(), via=_via(expanded)))
        location = rules[0].location if rules else reviewed[0].location if reviewed else SourceLocation("", 0)
        access = _flat(AccessList(location=location, authoritative=False), expanded)
        change = plan_access(address, workspace_id, access, self._live, self._state, self._today,
                                 revoked=(expanded.revoked_users, expanded.revoked_domains))
        if change is None:
            return None
        change = _explained(change, expanded, record)
        return change.model_copy(update={
            "governs": "rules",
            "rules": tuple(r.key for r in rules),
            "location": str(location) if rules or reviewed else None,
        })

    # --- access reviews ---------------------------------------------------------------------

    def _with_reviews(self, expanded: ExpandedAccess, spaces: Iterable[LiveWorkspace]) -> ExpandedAccess:
        """``expanded`` with the reviews' revocations on ``spaces`` added as revoked entries, as a rule's
        revoke scoped to those workspaces; one that the manifests grant on the list is a conflict instead."""
        if self._reviews is None:
            return expanded
        found = [r for ws in spaces for r in self._reviews.revocations.get(ws.id, ())]
        if not found:
            return expanded
        users, domains = dict(expanded.revoked_users), dict(expanded.revoked_domains)
        for revocation in found:
            grant = (expanded.users if revocation.kind == "user" else expanded.domains).get(revocation.key)
            if grant is not None:
                self._review_conflicts.append(_conflict(revocation, grant))
                continue
            (users if revocation.kind == "user" else domains).setdefault(revocation.key, revocation.source)
        return expanded._replace(revoked_users=users, revoked_domains=domains)

    def review_warnings(self) -> list[str]:
        """The stale decisions; ``PlanError`` when a review revokes what a manifest line grants."""
        if self._review_conflicts:
            raise PlanError("\n".join(["The plan cannot be made: a review revokes what the manifests grant.",
                                        *(f"  {c}" for c in sorted(set(self._review_conflicts)))]))
        return list(self._reviews.stale) if self._reviews is not None else []

    def unmatched_warnings(self) -> list[str]:
        """A rule that matches no workspace of the company (complete listing only)."""
        if not self._live.complete:
            return []
        spaces = list(self._live.workspaces.values())
        return [f"{r.match.location}: {r.address}: matches no workspace of the company "
                f"({len(spaces)} listed); check its match (a name pattern is case-sensitive)"
                for r in self.rules if not any(rule_matches(r, ws) for ws in spaces)]


def _conflict(revocation: ReviewRevocation, grant: Grant) -> str:
    source = revocation.source
    how = {"entry": "an explicit entry", "team": f"team {grant.source.team}",
           "rule": f"rule {grant.source.rule}"}.get(grant.source.kind, grant.source.kind)
    fix = {"entry": "run reconciler review close to remove that line",
           "team": "set removeFromTeam: true on the item and run reconciler review close, or change the team"
           }.get(grant.source.kind, "change the rule")
    return (f"{source.location}: review {source.campaign} by {source.reviewer} revokes {revocation.kind} "
            f"{revocation.key} on {revocation.workspace}, which {how} grants as {grant.role} at "
            f"{grant.source.location}; {fix}, or decide keep.")


def _flat(access: AccessList, expanded: ExpandedAccess) -> AccessList:
    """``access`` with its teams and rules expanded into plain entries, each at the line that decided it.

    Explicit entries always win, so the list's own entries are kept as they
    are and only the others are made (most of a company's entries are explicit)."""
    return access._replace(
        users=(*access.users, *(UserAccess(email=g.key, role=g.role, location=g.source.location, expires=g.expires)
                                for g in expanded.users.values() if g.source.kind != "entry")),
        domains=(*access.domains, *(DomainAccess(domain=g.key, role=g.role, location=g.source.location,
                                                 expires=g.expires)
                                    for g in expanded.domains.values() if g.source.kind != "entry")),
        teams=(),
    )


def _via(expanded: ExpandedAccess) -> dict[str, str]:
    via = {f"user:{k}": _origin(g.source) for k, g in expanded.users.items() if g.source.kind != "entry"}
    via.update({f"domain:{k}": _origin(g.source) for k, g in expanded.domains.items() if g.source.kind != "entry"})
    return via


def _origin(source: GrantSource) -> str:
    """``team customer-success`` or ``rule baseline``: what the state remembers as having put an entry there."""
    return f"rule {source.rule}" if source.kind == "rule" else f"team {source.team}"


def entry_source(source: GrantSource) -> EntrySource:
    """The typed plan field for a grant's source."""
    return EntrySource(kind=source.kind, location=str(source.location), team=source.team, rule=source.rule,
                       campaign=source.campaign, reviewer=source.reviewer, due=source.due)


def _explained(change: AccessChange, expanded: ExpandedAccess, record: AccessRecord | None) -> AccessChange:
    """Each entry with its source and a reason that names it."""
    via = (record.via or {}) if record is not None else {}
    entries = tuple(_entry(e, expanded, via) for e in change.entries)
    return change.model_copy(update={"entries": entries})


def _entry(entry: EntryChange, expanded: ExpandedAccess, via: Mapping[str, str]) -> EntryChange:
    grants = expanded.users if entry.kind == "user" else expanded.domains
    revoked = expanded.revoked_users if entry.kind == "user" else expanded.revoked_domains
    drift = "; changed outside reconciler since its last apply" if "drift" in entry.flags else ""
    if entry.action is not Action.DELETE:
        grant = grants[entry.key]
        return entry.model_copy(update={
            "source": entry_source(grant.source),
            "outranked": tuple(entry_source(a.source) for a in grant.also),
            "reason": _grant_reason(entry, grant) + drift,
        })
    # What put the entry there comes first (the team someone left is why a
    # list loses them); a rule's revoke is why every other list does.
    origin = via.get(f"{entry.kind}:{entry.key}")
    if origin is None and entry.key in revoked:
        source = revoked[entry.key]
        by = f"rule {source.rule}" if source.kind != "review" else (
            f"review {source.campaign} (not reviewed by {source.due})" if source.due else
            f"review {source.campaign} by {source.reviewer}")
        # A reviewer judged the entry as the service held it: its removal undoes no drift.
        flags = tuple(f for f in entry.flags if f != "drift") if source.kind == "review" else entry.flags
        return entry.model_copy(update={
            "source": entry_source(source),
            "reason": f"revoked by {by} ({source.location}): loses {entry.before} access",
            "flags": flags,
        })
    if origin is None or "expired" in entry.flags:
        return entry
    kind, _, key = origin.partition(" ")
    gone = ("no longer lists them" if kind == "team" and entry.kind == "user" else
            "no longer ensures it here")
    return entry.model_copy(update={
        "source": EntrySource(kind="team" if kind == "team" else "rule",
                              team=key if kind == "team" else None, rule=key if kind == "rule" else None),
        "reason": f"put there by {origin}, which {gone}: loses {entry.before} access{drift}",
    })


def _grant_reason(entry: EntryChange, grant: Grant) -> str:
    source = grant.source
    if source.kind == "entry":
        what = f"listed in the manifest as {grant.role}"
    elif source.kind == "team":
        what = f"team {source.team} ({source.location}) grants {grant.role}"
    else:
        via = f" via team {source.team}" if source.team else ""
        what = f"rule {source.rule}{via} ({source.location}) ensures {grant.role}"
    text = (f"{what}, has no access" if entry.action is Action.CREATE else
            f"role is {entry.before} in the service; {what}")
    decided = grant.explanation()
    if decided is not None:
        winner = "an explicit entry wins" if source.kind == "entry" else "the highest role wins"
        others = ", ".join(f"{a.role} from {_short(a.source)}" for a in grant.also)
        text += f" ({winner} over {others})"
    return text


def _short(source: GrantSource) -> str:
    if source.kind == "entry":
        return f"the entry at {source.location}"
    if source.kind == "team":
        return f"team {source.team}"
    return f"rule {source.rule}" + (f" via team {source.team}" if source.team else "")
