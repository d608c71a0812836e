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

Where a rule's revoke would leave a list without an owner, ``plan/handover.py``
decides: the rule's successor becomes owner, or (``set_aside_ownerless``) a
workspace no manifest names is left to a person and skipped.

Each entry change carries its ``source`` (explicit entry, team, rule): what
grants it, or what takes it away.  Manifests without teams and rules take
the planner's own path, untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date
from functools import lru_cache
from typing import NamedTuple

from reconciler.addresses import is_unmanaged, unmanaged_address
from reconciler.errors import PlanError
from reconciler.live import Live, LiveWorkspace, one_list_each
from reconciler.manifest.desired import (
    AccessList,
    Desired,
    DesiredGroup,
    DesiredMember,
    DesiredRule,
    DomainAccess,
    UserAccess,
)
from reconciler.manifest.location import SourceLocation
from reconciler.plan.access import plan_access
from reconciler.plan.reach import reach_of
from reconciler.plan.handover import acting_rules, hand_over, handover_entry, ownerless_needs_person
from reconciler.plan.model import (
    AccessChange,
    Action,
    Change,
    EntryChange,
    EntrySource,
    ManagedAccess,
    NeedsPerson,
    made,
)
from reconciler.plan.reviews import ReviewRevocation, named_lists, review_outcome
from reconciler.plan.rules import CreatedWorkspace, created_note, rule_matches, space_name
from reconciler.plan.teams import Alternative, ExpandedAccess, Grant, GrantSource, expand_access
from reconciler.state.model import AccessRecord, State
from reconciler.vocabulary import rank

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
        # What each list planned records once applied (``managed``, ``listed``), kept instead of its whole
        # expansion: a Grant and a GrantSource per entry of 10,000 lists were 56 MiB held to the plan's end.
        self._recorded: dict[str, _Recorded] = {}
        self.unmanaged_managed: list[ManagedAccess] = []
        # Access reviews' revocations (plan/reviews.py), merged into the list each workspace holds.
        self._reviews = (review_outcome(desired.reviews, live, today, named_lists(desired, member_id), self.teams)
                         if desired.reviews else None)
        self._review_conflicts: list[str] = []
        self._team_kept: list[str] = []  # a reviewer's revoke of what a team grants, without removeFromTeam: kept
        self._overdue_kept: list[str] = []  # overdue items onDue would revoke that the manifests grant: kept
        self.checked = 0  # lists of workspaces no manifest's list governs, checked against the rules

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
                found.append(_created(member, homepage))
        found += [self._live.workspaces[w] for w in probable if w in self._live.workspaces]
        return found

    def created_members(self, group: DesiredGroup) -> list[CreatedWorkspace]:
        """The members of ``group`` this plan creates, as rules see them (``group_workspaces``)."""
        homepage = self._live.workspaces.get(group.homepage)
        return [_created(m, homepage) for m in group.members
                if m.id is None and m.template is not None and self._member_id(m.address) is None]

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
        rules = self.rules_for(spaces)
        _refuse_defeated_except(rules, spaces)
        expanded = self._with_reviews(expand_access(access, self.teams, rules), spaces)
        change = self._planned(address, workspace_id, access, expanded, rules)
        users, domains = expanded.user_roles(), expanded.domain_roles()
        if change is not None:  # an authoritative list once applied is what it manages: one dict for both
            users = change.after.users if change.after.users == users else users
            domains = change.after.domains if change.after.domains == domains else domains
        self._recorded[address] = _Recorded(
            made(ManagedAccess, address=address, workspace_id=workspace_id, users=users, domains=domains,
                 via=_via(expanded)),
            tuple(expanded.revoked_users), tuple(expanded.revoked_domains))
        return change

    def managed(self, address: str, workspace_id: str, access: AccessList) -> ManagedAccess:
        """What the state records for a list after apply: every entry the list
        grants, teams and rules included, and which came from a team or rule."""
        recorded = self._recorded.get(address)
        if recorded is None:
            return ManagedAccess(address=address, workspace_id=workspace_id,
                                 users={u.email: u.role for u in access.users},
                                 domains={d.domain: d.role for d in access.domains})
        return recorded.managed

    def listed(self, address: str, access: AccessList) -> set[tuple[str, str]]:
        """(kind, key) of every entry the list manages: granted (teams and rules
        included) or revoked by a rule."""
        recorded = self._recorded.get(address)
        if recorded is None:
            return {("user", u.email) for u in access.users} | {("domain", d.domain) for d in access.domains}
        managed = recorded.managed
        return ({("user", k) for k in (*managed.users, *recorded.revoked_users)}
                | {("domain", k) for k in (*managed.domains, *recorded.revoked_domains)})

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
        candidates = [ws for ws in self._live.workspaces.values()
                      if ws.id not in skip and in_scope(unmanaged_address(ws.id))]
        by_id = {ws.id: ws for ws in candidates}
        # What a list-less group's homepage holds, a member the plan creates into the group will hold too.
        created = {g.homepage: self.created_members(g) for g in self._desired.groups if g.access is None}
        for ids in one_list_each(candidates, self._live.sharing):  # workspaces sharing one list: ONE change of it
            shared = [by_id[i] for i in ids]
            ws = shared[0]
            spaces = [*shared, *(self._live.workspaces[m] for m in groups_without_list.get(ws.id, ())
                                 if m in self._live.workspaces),
                      *(c for w in shared for c in created.get(w.id, ()))]
            _refuse_disagreeing_rules(self.rules, spaces)
            rules = self.rules_for(spaces)
            _refuse_defeated_except(rules, spaces)
            change = self._unmanaged(ws.id, rules, spaces)
            if change is not None:
                changes.append(_reaching(change, spaces, self._live) if len(spaces) > 1 else change)
        return changes

    def _recorded_unmanaged(self) -> bool:
        return any(map(is_unmanaged, self._state.resources))

    def _unmanaged(self, workspace_id: str, rules: tuple[DesiredRule, ...],
                   spaces: Sequence[LiveWorkspace]) -> AccessChange | None:
        address = unmanaged_address(workspace_id)
        record = self._state.access_record(address)
        expanded = self._with_reviews(expand_access(None, self.teams, rules), spaces)
        reviewed = [s for s in (*expanded.revoked_users.values(), *expanded.revoked_domains.values())
                    if s.kind == "review"]
        if not rules and record is None and not reviewed:
            return None
        self.checked += 1
        # Recorded even when empty: apply then forgets the address.
        self.unmanaged_managed.append(ManagedAccess(
            address=address, workspace_id=workspace_id, users=expanded.user_roles(),
            domains=expanded.domain_roles(), via=_via(expanded)))
        location = rules[0].location if rules else reviewed[0].location if reviewed else SourceLocation("", 0)
        change = self._planned(address, workspace_id, AccessList(location=location, authoritative=False),
                               expanded, rules)
        if change is None:
            return None
        # The header names the rules that act here, at the first one's line,
        # not every rule that matches (most have nothing to do on most workspaces).
        named = set(acting_rules(change))
        # dict.fromkeys: the directory's rules share one name.
        acting = tuple(dict.fromkeys(r.key for r in rules if r.key in named)) or tuple(dict.fromkeys(r.key for r in rules))
        first = next((r for r in rules if r.key == acting[0]), None) if acting else None
        return change.model_copy(update={
            "governs": "rules",
            "rules": acting,
            "location": str(first.location) if first is not None else str(location) if reviewed else None,
        })

    # --- access reviews ---------------------------------------------------------------------

    def review_revocations(self, workspace_id: str) -> list[ReviewRevocation]:
        """What the campaigns revoke on ``workspace_id`` (decided, or overdue with ``onDue: revoke``)."""
        return list(self._reviews.revocations.get(workspace_id, ())) if self._reviews is not None else []

    def _with_reviews(self, expanded: ExpandedAccess, spaces: Iterable[LiveWorkspace]) -> ExpandedAccess:
        """``expanded`` without the grants of the teams a review takes people out of (``removeFromTeam``),
        and with the reviews' revocations on ``spaces`` added as revoked entries, as a rule's revoke scoped
        to those workspaces; one that the manifests still grant on the list is a conflict instead."""
        if self._reviews is None:
            return expanded
        if self._reviews.leaving:
            expanded = expanded._replace(users=_without_leavers(expanded.users, self._reviews.leaving))
        found = [r for ws in spaces for r in self._reviews.revocations.get(ws.id, ())]
        if not found:
            return expanded
        users, domains = dict(expanded.revoked_users), dict(expanded.revoked_domains)
        for revocation in found:
            grant = (expanded.users if revocation.kind == "user" else expanded.domains).get(revocation.key)
            if grant is not None:
                # Nobody decided an overdue item: what the manifests grant stands, said, and the plan goes on
                # (an overdue campaign blocked every plan). A reviewer's revoke of what a team grants, without
                # removeFromTeam, is kept and said too: close keeps the team as it is, so a refusal would block
                # every plan for good. A revoke of an explicit entry or a rule's is refused until close or an
                # edit of the rule.
                kept = (self._overdue_kept if revocation.source.due is not None else
                        self._team_kept if grant.source.kind == "team" else self._review_conflicts)
                kept.append(_conflict(revocation, grant))
                continue
            (users if revocation.kind == "user" else domains).setdefault(revocation.key, revocation.source)
        return expanded._replace(revoked_users=users, revoked_domains=domains)

    def review_warnings(self) -> list[str]:
        """The stale decisions, removals from a team against a keep, revokes of what a team grants without
        removeFromTeam, overdue items the manifests grant; ``PlanError`` when a reviewer's revoke is of what an
        explicit entry or a rule grants."""
        if self._review_conflicts:
            raise PlanError("\n".join(["The plan cannot be made: a review revokes what the manifests grant.",
                                        *(f"  {c}" for c in sorted(set(self._review_conflicts)))]))
        stale = list(self._reviews.stale) if self._reviews is not None else []
        conflicts = list(self._reviews.conflicts) if self._reviews is not None else []
        return stale + conflicts + sorted(set(self._team_kept)) + sorted(set(self._overdue_kept))

    def _planned(self, address: str, workspace_id: str, access: AccessList, expanded: ExpandedAccess,
                 rules: tuple[DesiredRule, ...]) -> AccessChange | None:
        """The change of one list, each entry explained; where a revoked owner
        was the last one and the rule names a successor, the handover."""
        record = self._state.access_record(address)
        leaving = self._reviews.leaving if self._reviews is not None else {}
        change = plan_access(address, workspace_id, _flat(access, expanded), self._live, self._state,
                             self._today, revoked=(expanded.revoked_users, expanded.revoked_domains))
        if change is None:
            return None
        # Only where the list is not the manifest's own: an authoritative list
        # brings its owner, and the state would not keep a successor there.
        handed = hand_over(change, expanded, rules) if not access.authoritative else None
        if handed is None:
            return _explained(change, expanded, record, leaving)
        change = plan_access(address, workspace_id, _flat(access, handed), self._live, self._state,
                             self._today, revoked=(handed.revoked_users, handed.revoked_domains))
        assert change is not None  # the handover adds an owner: never no change
        change = _explained(change, handed, record, leaving)
        successors = {r.successor.email for r in rules if r.successor is not None}
        return change.model_copy(update={"entries": tuple(
            handover_entry(e, change, rules) if e.key in successors and e.kind == "user" and e.after == "owner"
            else e for e in change.entries)})

    def set_aside_ownerless(self, changes: Sequence[Change]) -> tuple[list[Change], list[NeedsPerson]]:
        """``changes`` without those of workspaces no manifest names that would
        have no owner (one already without, or one the rules would leave
        without): each becomes a ``NeedsPerson``, and its state record stays
        as it was, so the rules apply everywhere else."""
        kept: list[Change] = []
        stuck: list[NeedsPerson] = []
        for change in changes:
            if isinstance(change, AccessChange) and change.governs == "rules" and not change.after.owners():
                stuck.append(ownerless_needs_person(change, self.rules))
                self._keep_recorded(change.address)
            else:
                kept.append(change)
        return kept, stuck

    def _keep_recorded(self, address: str) -> None:
        record = self._state.access_record(address)
        kept = [] if record is None else [ManagedAccess.model_validate({
            "address": address, "workspace_id": self._state.resources[address].id,
            "users": record.users, "domains": record.domains, "via": record.via or {}})]
        self.unmanaged_managed = [*(m for m in self.unmanaged_managed if m.address != address), *kept]

    def rules_only(self, named: Collection[str]) -> int | None:
        """How many workspaces no manifest names a rule reaches (None: no rules, or a partial listing)."""
        if not self.rules or not self._live.complete:
            return None
        return sum(1 for ws in self._live.workspaces.values()
                   if ws.id not in named and any(rule_matches(r, ws) for r in self.rules))

    def unmatched_warnings(self) -> list[str]:
        """A rule naming an account or template id no workspace of the company
        has (a name where an id is wanted, most often), with the ids there are;
        a rule that matches no workspace of the company (complete listing only)."""
        if not self._live.complete:
            return []
        listed = list(self._live.workspaces.values())
        # A workspace the plan creates is matched as it will be once it exists (its name, account, template).
        spaces = [*listed, *(c for g in self._desired.groups for c in self.created_members(g))]
        found: list[str] = []
        for rule in (r for r in self.rules if not r.from_directory):  # all: true matches whatever there is
            unknown = _unknown_ids(rule, spaces)
            if unknown:
                found += unknown
            elif not any(rule_matches(rule, ws) for ws in spaces):
                found.append(f"{rule.match.location}: {rule.address}: matches no workspace of the company "
                             f"({len(listed)} listed); check its match (a name pattern is case-sensitive)")
        return found


def _created(member: DesiredMember, homepage: LiveWorkspace | None) -> CreatedWorkspace:
    """``member``, which the plan creates, as rules will see it: the name and template of the manifest, the
    homepage's account (what the creation is given: plan/workspaces.py)."""
    return CreatedWorkspace(id="", name=member.name, template_id=member.template,
                            account_id=homepage.account_id if homepage is not None else None,
                            address=member.address, location=str(member.location))


def _unknown_ids(rule: DesiredRule, spaces: Sequence[LiveWorkspace]) -> list[str]:
    """``match.accounts`` and ``match.templates`` ids that no workspace has, each with the ids there are."""
    found = []
    for key, given, present in (("accounts", rule.match.accounts, {w.account_id for w in spaces}),
                                ("templates", rule.match.templates, {w.template_id for w in spaces})):
        known = sorted(i for i in present if i)
        what = "account" if key == "accounts" else "template"
        for value in given or ():
            if value not in present:
                there = ", ".join(known) if known else "none"
                found.append(f"{rule.match.location}: {rule.address}: match.{key}: {value} is not the {what} id of "
                             f"any workspace of the company; match takes ids, not names ({what} ids of the "
                             f"company's workspaces: {there})")
    return found


def _refuse_disagreeing_rules(rules: Sequence[DesiredRule], shared: Sequence[LiveWorkspace]) -> None:
    """Rules matching different workspaces of one shared list must agree:
    one cannot ensure what another revokes, nor two give one person two roles.
    (Rules matching the same workspace are merged as always: highest role.)"""
    if len(shared) < 2:
        return
    matching = [(r, [space_name(w) for w in shared if rule_matches(r, w)]) for r in rules]
    matching = [(r, ids) for r, ids in matching if ids]
    for i, (first, first_ids) in enumerate(matching):
        for second, second_ids in matching[i + 1:]:
            if set(first_ids) == set(second_ids):
                continue
            clash = _clash(first, second) or _clash(second, first)
            if clash:
                raise PlanError(
                    f"{first.location}: {first.address} and {second.location}: {second.address} disagree about "
                    f"one shared access list: {clash}. The workspaces {', '.join(map(space_name, shared))} are "
                    f"connected and hold one list;{created_note(shared)} {first.address} matches "
                    f"{', '.join(first_ids)} and {second.address} matches {', '.join(second_ids)}. Make the rules "
                    "agree, or exclude the group's workspaces from one of them (except:).")


def _reaching(change: AccessChange, spaces: Sequence[LiveWorkspace], live: Live) -> AccessChange:
    """``change`` of a list several workspaces no manifest names hold, naming each of them (its reach), so
    every view names every workspace the write reaches, as it does for a group's list."""
    reach = tuple(reach_of(ws.id, live, probable=ws.id != change.workspace_id, note=_SAME_LIST)
                  for ws in spaces if ws.id in live.workspaces)
    return change.model_copy(update={"reach": reach, "reaches": tuple(r.workspace for r in reach)})


_SAME_LIST = "holds this list too: it shows the same entry ids; the service does not say so"


def _refuse_defeated_except(rules: Sequence[DesiredRule], shared: Sequence[LiveWorkspace]) -> None:
    """A rule that matches a workspace of a shared list reaches every workspace holding that list: an
    ``except`` naming one of them cannot hold, and is refused rather than silently defeated."""
    spaces = [w for w in shared if w.id or isinstance(w, CreatedWorkspace)]  # one the plan creates holds it too
    held = [space_name(w) for w in spaces]
    if len(held) < 2:
        return
    for rule in rules:
        match = rule.match
        for index, excepted in enumerate(match.except_ids):
            if not any(w.id == excepted for w in spaces):
                continue
            at = match.except_locations[index] if index < len(match.except_locations) else match.location
            matched = [space_name(w) for w in spaces if rule_matches(rule, w)]
            raise PlanError(
                f"{at}: {rule.address}: except {excepted} cannot hold: {excepted} holds one access list with "
                f"{', '.join(w for w in held if w != excepted)} (connected, so one list for all of {', '.join(held)}), "
                f"and the rule matches {', '.join(matched)}, so its entries would reach {excepted} too."
                f"{created_note(spaces)} Except every workspace of the shared list, or none of them.")


def _clash(one: DesiredRule, other: DesiredRule) -> str | None:
    ensured = {u.email: u.role for u in one.ensure_users} | {d.domain: d.role for d in one.ensure_domains}
    revoked = {r.key for r in (*other.revoke_users, *other.revoke_domains)}
    for key in sorted(ensured.keys() & revoked):
        return f"{one.address} ensures {key} and {other.address} revokes it"
    theirs = {u.email: u.role for u in other.ensure_users} | {d.domain: d.role for d in other.ensure_domains}
    for key in sorted(ensured.keys() & theirs.keys()):
        if ensured[key] != theirs[key]:
            return f"{one.address} gives {key} {ensured[key]} and {other.address} gives {theirs[key]}"
    return None


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


class _Recorded(NamedTuple):
    """Of one list's expansion, what the plan needs once the list is planned."""

    managed: ManagedAccess
    revoked_users: tuple[str, ...]
    revoked_domains: tuple[str, ...]


def _via(expanded: ExpandedAccess) -> dict[str, str]:
    via = {f"user:{k}": _origin(g.source) for k, g in expanded.users.items() if g.source.kind != "entry"}
    via.update({f"domain:{k}": _origin(g.source) for k, g in expanded.domains.items() if g.source.kind != "entry"})
    return via


def _origin(source: GrantSource) -> str:
    """``team customer-success`` or ``rule baseline``: what the state remembers as having put an entry there."""
    return f"rule {source.rule}" if source.kind == "rule" else f"team {source.team}"


def _conflict(revocation: ReviewRevocation, grant: Grant) -> str:
    """A review's revocation of what the manifests grant: a reviewer's decision (refused), or an overdue
    item onDue would revoke (kept, said)."""
    source = revocation.source
    how = {"entry": "an explicit entry", "team": f"team {grant.source.team}",
           "rule": f"rule {grant.source.rule}"}.get(grant.source.kind, grant.source.kind)
    if source.due is not None:
        return (f"{source.location}: review {source.campaign}: {revocation.kind} {revocation.key} on "
                f"{revocation.workspace} was not reviewed by {source.due} (onDue: revoke), but {how} grants it as "
                f"{grant.role} at {grant.source.location}: kept, as the manifests say. Decide it in the review, or "
                "change what grants it.")
    if grant.source.kind == "team":
        return (f"{source.location}: review {source.campaign} by {source.reviewer} revokes {revocation.kind} "
                f"{revocation.key} on {revocation.workspace}, which {how} grants as {grant.role} at "
                f"{grant.source.location}: not carried out, and kept (a revoke takes no one out of a team by "
                "itself). To carry it out, set removeFromTeam: true on the item (before review close), or change "
                "the team.")
    fix = "run reconciler review close to remove that line" if grant.source.kind == "entry" else "change the rule"
    return (f"{source.location}: review {source.campaign} by {source.reviewer} revokes {revocation.kind} "
            f"{revocation.key} on {revocation.workspace}, which {how} grants as {grant.role} at "
            f"{grant.source.location}; {fix}, or decide keep.")


@lru_cache(maxsize=4096)
def entry_source(source: GrantSource) -> EntrySource:
    """The typed plan field for a grant's source: one value per source, however many entries it grants (a
    rule's team on 10,000 lists was 20,000 models, 19 MiB; a frozen model is safe to share)."""
    return EntrySource(kind=source.kind, location=str(source.location), team=source.team, rule=source.rule,
                       campaign=source.campaign, reviewer=source.reviewer, due=source.due, since=source.since)


def _explained(change: AccessChange, expanded: ExpandedAccess, record: AccessRecord | None,
               leaving: Mapping[tuple[str, str], GrantSource]) -> AccessChange:
    """Each entry with its source and a reason that names it."""
    via = (record.via or {}) if record is not None else {}
    entries = tuple(_entry(e, expanded, via, leaving) for e in change.entries)
    return change.model_copy(update={"entries": entries})


def _without_leavers(grants: dict[str, Grant], leaving: Mapping[tuple[str, str], GrantSource]) -> dict[str, Grant]:
    """``grants`` without what a team grants a person a review takes out of it (directly or through a rule
    naming the team), as the list will read once review close has removed them: a person the list has only
    through such teams loses the grant, another source of theirs decides again (the highest role)."""
    found = grants
    for key in dict.fromkeys(person for person, _ in leaving):
        grant = found.get(key)
        if grant is None:
            continue
        sources = [Alternative(grant.role, grant.source), *grant.also]
        rest = [a for a in sources if a.source.team is None or (key, a.source.team) not in leaving]
        if len(rest) == len(sources):
            continue
        found = dict(found) if found is grants else found
        if not rest:
            del found[key]
            continue
        first = max(rest, key=lambda a: rank(a.role))  # the first of the highest role, as expand_access decides
        found[key] = Grant(key, first.role, first.source, grant.expires if first.source == grant.source else None,
                           tuple(a for a in rest if a is not first))
    return found


def _entry(entry: EntryChange, expanded: ExpandedAccess, via: Mapping[str, str],
           leaving: Mapping[tuple[str, str], GrantSource]) -> EntryChange:
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
    # list loses them); a rule's revoke is why every other list does.  A leaver
    # of the directory is the exception: the deactivation is why they left
    # their teams too (a synced group holds active members only), so it is the
    # reason on every list.
    origin = via.get(f"{entry.kind}:{entry.key}")
    if entry.key in revoked and revoked[entry.key].kind == "directory":
        source = revoked[entry.key]
        return entry.model_copy(update={
            "source": entry_source(source),
            "reason": f"deactivated in the directory on {source.since} ({source.location}): loses {entry.before} access",
        })
    # A reviewer's revoke is why their workspace's list loses the entry, whatever had put it there.
    if entry.key in revoked and (origin is None or revoked[entry.key].kind == "review"):
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
    # A team a review takes the person out of (removeFromTeam): the review is why, not "left team".
    review = leaving.get((entry.key, key)) if kind == "team" and entry.kind == "user" else None
    if review is not None:
        return entry.model_copy(update={
            "source": entry_source(review._replace(team=key)),
            "reason": f"revoked by review {review.campaign} by {review.reviewer} ({review.location}), which takes "
                      f"them out of team {key}: loses {entry.before} access{drift}",
        })
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
