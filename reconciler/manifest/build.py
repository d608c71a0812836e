"""Turn one validated manifest file into located Desired nodes.

The validated ``ManifestSpec`` gives the values; the loaded YAML tree, walked
alongside it, gives each node's line.  Only called once every rule passed,
so the two trees have the same shape.

The nodes are NamedTuples (see desired.py): their values come from ``ManifestSpec``,
already validated and of the right types, so nothing is validated twice.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

from reconciler.manifest.desired import (
    AccessList,
    AssetMetadata,
    DealLink,
    DesiredAsset,
    DesiredDirectory,
    DesiredGroup,
    DesiredMember,
    DesiredMove,
    DesiredPolicy,
    DesiredRule,
    DesiredTeam,
    DesiredWorkspace,
    DirectoryGroupMembers,
    DirectoryLeaver,
    DomainAccess,
    PolicyValue,
    RevokedEntry,
    RuleMatch,
    TaskSetting,
    TeamAccess,
    TeamMember,
    UserAccess,
    V,
    VisibilitySetting,
)
from reconciler.manifest.location import SourceLocation
from reconciler.manifest.models import (
    AccessSpec,
    AssetSpec,
    AudioAssetSpec,
    CompletedSpec,
    DirectorySpec,
    EmbedAssetSpec,
    HiddenSpec,
    LinkAssetSpec,
    ManifestSpec,
    MemberSpec,
    PolicySpec,
    RuleEnsureSpec,
    RuleRevokeSpec,
    RuleSpec,
    TeamEntrySpec,
    TeamFromGroupSpec,
    VideoAssetSpec,
)
from reconciler.manifest.rules import guess_mime_type
from reconciler.manifest.yaml_lines import LineDict


class FileParts(NamedTuple):
    """The Desired nodes one manifest file contributes."""

    groups: tuple[DesiredGroup, ...]
    workspaces: tuple[DesiredWorkspace, ...]
    assets: tuple[DesiredAsset, ...]
    policy: DesiredPolicy | None = None
    teams: tuple[DesiredTeam, ...] = ()
    rules: tuple[DesiredRule, ...] = ()
    moves: tuple[DesiredMove, ...] = ()
    directory: DesiredDirectory | None = None


class _Builder:
    def __init__(self, file: str, base_dir: Path, root: Path) -> None:
        self.file = file
        self.base_dir = base_dir
        self.root = root

    def at(self, mapping: LineDict, key: str) -> SourceLocation:
        return SourceLocation(self.file, mapping.key_lines[key])

    def access(self, spec: AccessSpec | None, parent: LineDict) -> AccessList | None:
        if spec is None:
            return None
        raw = parent["access"]
        file = self.file
        # Positional and zipped with the lines: a manifest of 10,000 lists has 250,000 entries.
        user_lines = raw["users"].item_lines if spec.users else ()
        domain_lines = raw["domains"].item_lines if spec.domains else ()
        make = tuple.__new__  # a NamedTuple's own __new__ is Python code, called twice an entry
        return AccessList(
            users=tuple([make(UserAccess, (u["email"], u["role"], make(SourceLocation, (file, line)), u["expires"]))
                         for u, line in zip(spec.users, user_lines, strict=True)]),
            domains=tuple([make(DomainAccess, (d["domain"], d["role"], make(SourceLocation, (file, line)), d["expires"]))
                           for d, line in zip(spec.domains, domain_lines, strict=True)]),
            teams=self.team_refs(spec.teams, raw),
            authoritative=spec.authoritative,
            notify=spec.notify,
            message=spec.message,
            location=self.at(parent, "access"),
        )

    def items(self, parent: LineDict, key: str) -> list[SourceLocation]:
        """The location of each item of the list ``parent[key]`` (none when absent)."""
        raw = parent.get(key)
        return [SourceLocation(self.file, line) for line in raw.item_lines] if raw is not None else []

    def team_refs(self, specs: tuple[TeamEntrySpec, ...], parent: LineDict) -> tuple[TeamAccess, ...]:
        lines = self.items(parent, "teams")
        return tuple(TeamAccess(team=t.team, role=t.role, location=lines[i]) for i, t in enumerate(specs))

    def team(self, key: str, emails: tuple[str, ...] | TeamFromGroupSpec, teams: LineDict) -> DesiredTeam:
        if isinstance(emails, TeamFromGroupSpec):  # its members are the group's (manifest/directory.py)
            return DesiredTeam(key=key, location=self.at(teams, key), directory_group=emails.directoryGroup)
        lines = self.items(teams, key)
        return DesiredTeam(key=key, location=self.at(teams, key),
                           members=tuple(TeamMember(email=e, location=lines[i]) for i, e in enumerate(emails)))

    def rule(self, key: str, spec: RuleSpec, rules: LineDict) -> DesiredRule:
        raw = rules[key]
        match = RuleMatch(
            all=spec.match.all is True,
            accounts=spec.match.accounts,
            templates=spec.match.templates,
            names=spec.match.names,
            except_ids=spec.match.except_,
            except_locations=tuple(self.items(raw.get("match") or LineDict(), "except")),
            location=self.at(raw, "match"),
        )
        ensure, revoke = raw.get("ensure") or LineDict(), raw.get("revoke") or LineDict()  # ensure: null is absent
        ensured = spec.ensure or RuleEnsureSpec()
        revoked = spec.revoke or RuleRevokeSpec()
        users, domains = self.items(ensure, "users"), self.items(ensure, "domains")
        gone_users, gone_domains = self.items(revoke, "users"), self.items(revoke, "domains")
        return DesiredRule(
            key=key,
            match=match,
            ensure_users=tuple(UserAccess(email=u["email"], role=u["role"], expires=u["expires"], location=users[i])
                               for i, u in enumerate(ensured.users)),
            ensure_teams=self.team_refs(ensured.teams, ensure),
            ensure_domains=tuple(DomainAccess(domain=d["domain"], role=d["role"], expires=d["expires"],
                                              location=domains[i])
                                 for i, d in enumerate(ensured.domains)),
            revoke_users=tuple(RevokedEntry(key=e, location=gone_users[i]) for i, e in enumerate(revoked.users)),
            revoke_domains=tuple(RevokedEntry(key=d, location=gone_domains[i])
                                 for i, d in enumerate(revoked.domains)),
            successor=(UserAccess(email=revoked.successor, role="owner", location=self.at(revoke, "successor"))
                       if revoked.successor is not None else None),
            location=self.at(rules, key),
        )

    def directory(self, spec: DirectorySpec | None, document: LineDict) -> DesiredDirectory | None:
        if spec is None:
            return None
        raw = document["directory"] or LineDict()  # directory: null holds nothing
        raw_groups, raw_leavers = raw.get("groups") or LineDict(), raw.get("deactivated") or LineDict()
        groups = []
        for (name, emails), written in zip(spec.groups.items(), raw_groups, strict=True):
            lines = self.items(raw_groups, written)
            groups.append(DirectoryGroupMembers(name=name, location=self.at(raw_groups, written), members=tuple(
                TeamMember(email=e, location=lines[i]) for i, e in enumerate(emails))))
        leavers = []
        for written in raw_leavers:  # keys as written; the spec's are lower-cased (and once each: rules.py)
            email = str(written).lower()
            left = spec.deactivated[email]
            at = self.at(raw_leavers, written)
            successor = UserAccess(email=left.successor, role="owner", location=at) if left.successor else None
            leavers.append(DirectoryLeaver(email=email, since=left.since, location=at, successor=successor))
        return DesiredDirectory(location=self.at(document, "directory"), groups=tuple(groups), leavers=tuple(leavers))

    def policy(self, spec: PolicySpec | None, document: LineDict) -> DesiredPolicy | None:
        if spec is None:
            return None
        raw = document["policy"]

        def one(key: str, value: V | None) -> PolicyValue[V] | None:
            return None if value is None else PolicyValue(value=value, location=self.at(raw, key))

        def many(key: str, values: tuple[str, ...] | None) -> tuple[PolicyValue[str], ...] | None:
            if values is None:
                return None
            items = raw[key]
            return tuple(PolicyValue(value=v, location=SourceLocation(self.file, items.item_lines[i]))
                         for i, v in enumerate(values))

        return DesiredPolicy(
            allowed_domains=many("allowedDomains", spec.allowedDomains),
            max_role_outside=one("maxRoleOutside", spec.maxRoleOutside),
            protected_owners=many("protectedOwners", spec.protectedOwners or None) or (),
            max_revocations=one("maxRevocations", spec.maxRevocations),
            max_escalations=one("maxEscalations", spec.maxEscalations),
            max_notified=one("maxNotified", spec.maxNotified),
            min_owners=one("minOwners", spec.minOwners),
            location=self.at(document, "policy"),
        )

    def visibility(self, specs: dict[str, HiddenSpec], parent: LineDict, key: str) -> tuple[VisibilitySetting, ...]:
        raw = parent.get(key, LineDict())
        return tuple(VisibilitySetting(id=i, hidden=s.hidden, location=self.at(raw, i)) for i, s in specs.items())

    def tasks(self, specs: dict[str, CompletedSpec], parent: LineDict) -> tuple[TaskSetting, ...]:
        raw = parent.get("tasks", LineDict())
        return tuple(TaskSetting(id=i, completed=s.completed, location=self.at(raw, i)) for i, s in specs.items())

    def member(self, group: str, key: str, spec: MemberSpec, members: LineDict) -> DesiredMember:
        raw = members[key]
        deal = None
        if spec.deal is not None:
            deal = DealLink(
                crm_one_deal_id=spec.deal.crmOneDealId,
                crm_two_opportunity_id=spec.deal.crmTwoOpportunityId,
                location=self.at(raw, "deal"),
            )
        return DesiredMember(
            group=group,
            key=key,
            id=spec.id,
            template=spec.template,
            name=spec.name,
            start_date=spec.startDate,
            target_end_date=spec.targetEndDate,
            actual_end_date=spec.actualEndDate,
            deal=deal,
            sections=self.visibility(spec.sections, raw, "sections"),
            pages=self.visibility(spec.pages, raw, "pages"),
            tasks=self.tasks(spec.tasks, raw),
            location=self.at(members, key),
        )

    def asset(self, key: str, spec: AssetSpec, assets: LineDict) -> DesiredAsset:
        fields: dict[str, object] = {}
        if isinstance(spec, (LinkAssetSpec, EmbedAssetSpec)):
            fields["url"] = spec.url
            if isinstance(spec, EmbedAssetSpec):
                fields["custom_code"] = spec.customCode
        else:
            source = (self.base_dir / spec.file).resolve()
            fields["file"] = source
            fields["file_label"] = source.relative_to(self.root.resolve()).as_posix()
            fields["mime_type"] = spec.mimeType or guess_mime_type(spec.file)
            fields["digest"], fields["size"] = file_digest(source)
            if isinstance(spec, (VideoAssetSpec, AudioAssetSpec)) and spec.metadata is not None:
                fields["metadata"] = AssetMetadata(**spec.metadata.model_dump())
        return DesiredAsset(
            key=key,
            type=spec.type,
            name=spec.name,
            description=spec.description,
            tags=spec.tags,
            internal=spec.internal,
            location=self.at(assets, key),
            **fields,  # type: ignore[arg-type]  # the kind's own fields, already validated by ManifestSpec
        )


def file_digest(path: Path) -> tuple[str, int]:
    """The SHA-256 (hex) and size of a file's bytes, read once."""
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256")
        return digest.hexdigest(), handle.tell()


def build_file(spec: ManifestSpec, document: LineDict, file: str, base_dir: Path, root: Path) -> FileParts:
    """The groups, workspaces and assets of one valid manifest file, located."""
    b = _Builder(file, base_dir, root)
    groups_raw = document.get("groups", LineDict())
    workspaces_raw = document.get("workspaces", LineDict())
    assets_raw = document.get("assets", LineDict())
    groups = tuple(
        DesiredGroup(
            key=key,
            homepage=g.homepage,
            access=b.access(g.access, groups_raw[key]),
            members=tuple(
                b.member(key, member_key, m, groups_raw[key]["workspaces"]) for member_key, m in g.workspaces.items()
            ),
            location=b.at(groups_raw, key),
        )
        for key, g in spec.groups.items()
    )
    workspaces = tuple(
        DesiredWorkspace(
            key=key,
            id=w.id,
            access=b.access(w.access, workspaces_raw[key]),
            sections=b.visibility(w.sections, workspaces_raw[key], "sections"),
            pages=b.visibility(w.pages, workspaces_raw[key], "pages"),
            tasks=b.tasks(w.tasks, workspaces_raw[key]),
            location=b.at(workspaces_raw, key),
        )
        for key, w in spec.workspaces.items()
    )
    assets = tuple(b.asset(key, a, assets_raw) for key, a in spec.assets.items())
    teams_raw = document.get("teams", LineDict())
    teams = tuple(b.team(key, emails, teams_raw) for key, emails in spec.teams.items())
    rules_raw = document.get("rules", LineDict())
    rules = tuple(b.rule(key, r, rules_raw) for key, r in spec.rules.items())
    moves = tuple(DesiredMove(source=m.from_, destination=m.to, location=at)
                  for m, at in zip(spec.moved, b.items(document, "moved"), strict=False))  # a group or workspace piece has none
    return FileParts(groups, workspaces, assets, b.policy(spec.policy, document), teams, rules, moves,
                     b.directory(spec.directory, document))
