"""``review start``'s campaign as a pure function of one company read.

Every row of the company (``CompanyAccess``: each live entry with why it is
there, the same ``why`` text ``who`` and ``report`` show) in the campaign's
scope becomes an item of each of its workspace's reviewers: the workspace's
owners (users with role owner; a workspace with none goes to the fallback),
or, with a team, one member per workspace in turn (workspaces in id order,
members in the team's order) so the work is shared evenly.  Items are
ordered by workspace id, then kind (users, then domains), then key.

No one reviews their own access: a reviewer's own entry on a workspace goes
to its other reviewers (the other owners), or, when there is none, to the
one who stands in (with a team, its next member in turn; else the
fallback).  An entry only its holder could review stops the start.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import NamedTuple

from reconciler.company.model import AccessRow, CompanyAccess
from reconciler.domains import is_within
from reconciler.errors import ConfigError
from reconciler.manifest.desired import Desired, ReviewItem
from reconciler.manifest.location import SourceLocation
from reconciler.manifest.reviews import items_digest
from reconciler.manifest.values import email_problem
from reconciler.review.yaml_out import campaign_yaml, decisions_yaml
from reconciler.text import plural, printable, quoted

_KIND_ORDER = {"user": 0, "domain": 1}


class StartOptions(NamedTuple):
    name: str
    due: date
    today: date
    external: bool = False
    reviewers: str = "owners"  # or "team:NAME"
    fallback: str | None = None
    on_due: str = "flag"


class Started(NamedTuple):
    """The files to write (name → text) and what they hold."""

    files: dict[str, str]
    items: int
    workspaces: int
    reviewers: int


def check_options(desired: Desired, options: StartOptions) -> None:
    """Everything that can be refused before the company is read."""
    if options.due < options.today:
        raise ConfigError(f"review start {options.name}: --due {options.due.isoformat()} is before today "
                          f"({options.today.isoformat()}); give the date the reviewers must decide by.")
    if options.reviewers.startswith("team:"):
        team = options.reviewers.partition(":")[2]
        teams = {t.key: t for t in desired.teams}
        if team not in teams or not teams[team].members:
            known = ", ".join(sorted(teams)) or "none"
            raise ConfigError(f"review start {options.name}: --reviewers team:{printable(team)}: no such team with "
                              f"members in the manifests (teams defined: {known}).")
    elif options.reviewers != "owners":
        raise ConfigError(f"review start {options.name}: --reviewers {printable(options.reviewers)}: "
                          "give owners or team:NAME.")
    if options.external and _allowed(desired) is None:
        raise ConfigError(f"review start {options.name}: --scope-external needs policy.allowedDomains in the "
                          "manifests (external means outside them).")


def _allowed(desired: Desired) -> tuple[str, ...] | None:
    policy = desired.policy
    if policy is None or policy.allowed_domains is None:
        return None
    return tuple(str(v.value) for v in policy.allowed_domains)


def is_external(row_kind: str, key: str, allowed: Sequence[str]) -> bool:
    """Outside ``allowed`` (a subdomain of an allowed domain is inside), as the policy judges it."""
    return not is_within(key.rpartition("@")[2] if row_kind == "user" else key, allowed)


def start_campaign(desired: Desired, company: CompanyAccess, options: StartOptions) -> Started:
    """The campaign file and one file per reviewer, from ``company``."""
    allowed = _allowed(desired) or ()
    rows = sorted((r for r in company.rows if not options.external or is_external(r.kind, r.key, allowed)),
                  key=lambda r: (r.workspace_id, _KIND_ORDER[r.kind], r.key))
    by_workspace: dict[str, list[AccessRow]] = {}
    for row in rows:
        by_workspace.setdefault(row.workspace_id, []).append(row)
    assigned = _reviewers(desired, company, sorted(by_workspace), options)
    per_reviewer: dict[str, list[ReviewItem]] = {}
    reviewed: dict[str, list[str]] = {}  # reviewer -> the workspaces they review entries of, for a refusal
    own_only: list[AccessRow] = []
    for workspace_id in sorted(by_workspace):
        for row in by_workspace[workspace_id]:
            deciders = _deciders(row, assigned[workspace_id])
            if not deciders:
                own_only.append(row)
            for reviewer in deciders:
                per_reviewer.setdefault(reviewer, []).append(_item(options.name, reviewer, row))
                held = reviewed.setdefault(reviewer, [])
                if not held or held[-1] != workspace_id:
                    held.append(workspace_id)
    if own_only:
        _refuse_own_review(options.name, own_only)
    files: dict[str, str] = {}
    for reviewer in sorted(per_reviewer):
        _refuse_unfit_reviewer(options.name, reviewer, reviewed[reviewer])
        files[f"{reviewer}.yaml"] = decisions_yaml(options.name, options.due, reviewer, per_reviewer[reviewer])
    assignment = {f"{reviewer}.yaml": items_digest((i.workspace, i.kind, i.key, i.role) for i in given)
                  for reviewer, given in per_reviewer.items()}
    files = {"campaign.yaml": campaign_yaml(
        options.name, started=options.today, due=options.due, on_due=options.on_due, external=options.external,
        reviewers=options.reviewers, fallback=options.fallback, assignment=assignment), **files}
    return Started(files=files, items=sum(len(v) for v in per_reviewer.values()), workspaces=len(by_workspace),
                   reviewers=len(per_reviewer))


def reviewer_file_problem(address: str) -> str | None:
    """Why ``address`` cannot name a reviewer's file ``reviews/NAME/<address>.yaml``, or None.

    The owners' addresses come from the service, which is not trusted to give
    email addresses: one holding a path separator would write outside the
    campaign's folder (over another campaign's files), a control or bidi
    character would hide in the file's name, and a reviewer's file must name
    a reviewer the manifests can read back (an email address)."""
    if any(sep in address for sep in ("/", "\\")):
        return "it holds a path separator, so the reviewer's file would be written outside the campaign's folder"
    problem = email_problem(address)
    if problem is not None:
        return f"it is not an email address{'; ' + problem if problem else ''}"
    return None


def _refuse_unfit_reviewer(campaign: str, reviewer: str, workspaces: list[str]) -> None:
    problem = reviewer_file_problem(reviewer)
    if problem is None:
        return
    listed = ", ".join(printable(w) for w in workspaces[:10]) + (" ..." if len(workspaces) > 10 else "")
    raise ConfigError(f"review start {campaign}: {quoted(reviewer)}, the owner of {listed} and so its reviewer, "
                      f"cannot name a reviewer's file: {problem}. Nothing was written. Correct the owner in the "
                      "web app, or have the workspaces reviewed by a team (--reviewers team:NAME).")


class WorkspaceReviewers(NamedTuple):
    """Who reviews one workspace's entries, and who stands in for an entry only they hold."""

    reviewers: tuple[str, ...]
    stand_ins: tuple[str, ...] = ()  # in order: the first who does not hold the entry reviews it


def _deciders(row: AccessRow, chosen: WorkspaceReviewers) -> list[str]:
    """Who reviews ``row``: the workspace's reviewers but its holder, or the first stand-in who is not its
    holder; none when only the holder could."""
    holder = row.key if row.kind == "user" else None
    found = [r for r in chosen.reviewers if r != holder]
    if found:
        return found
    return [r for r in chosen.stand_ins if r != holder][:1]


def _refuse_own_review(campaign: str, rows: list[AccessRow]) -> None:
    listed = ", ".join(f"{printable(r.key)} on {printable(r.workspace_id)}" for r in rows[:10]) + (
        " ..." if len(rows) > 10 else "")
    raise ConfigError(f"review start {campaign}: {plural(len(rows), 'entry', 'entries')} in scope would be reviewed "
                      f"only by the person who holds {'it' if len(rows) == 1 else 'them'} ({listed}), and no one "
                      "reviews their own access. Give --fallback EMAIL, someone else, to review those. Nothing was "
                      "written.")


def _reviewers(desired: Desired, company: CompanyAccess, workspace_ids: list[str],
               options: StartOptions) -> dict[str, WorkspaceReviewers]:
    fallback = (options.fallback,) if options.fallback is not None else ()
    if options.reviewers.startswith("team:"):
        team = next(t for t in desired.teams if t.key == options.reviewers.partition(":")[2])
        members = team.emails()
        # An entry of the workspace's member goes to the next member in turn.
        return {w: WorkspaceReviewers((members[i % len(members)],),
                                      tuple(members[(i + j) % len(members)] for j in range(1, len(members)))
                                      + fallback)
                for i, w in enumerate(workspace_ids)}
    # A person a rule revokes (someone leaving) reviews nothing: their workspaces go to the other owners,
    # or to the fallback.
    leaving = {r.key for rule in desired.rules for r in rule.revoke_users}
    owners: dict[str, list[str]] = {}
    for row in company.rows:
        if row.kind == "user" and row.role == "owner" and row.key not in leaving:
            owners.setdefault(row.workspace_id, []).append(row.key)
    ownerless = [w for w in workspace_ids if not owners.get(w)]
    if ownerless and options.fallback is None:
        listed = ", ".join(printable(w) for w in ownerless[:10]) + (" ..." if len(ownerless) > 10 else "")
        raise ConfigError(f"review start {options.name}: {plural(len(ownerless), 'workspace')} in scope "
                          f"{'has' if len(ownerless) == 1 else 'have'} no owner to review it ({listed}); "
                          "give --fallback EMAIL to review those.")
    return {w: WorkspaceReviewers(tuple(sorted(owners[w])), fallback) if owners.get(w)
            else WorkspaceReviewers(fallback) for w in workspace_ids}


def _item(campaign: str, reviewer: str, row: AccessRow) -> ReviewItem:
    return ReviewItem(campaign=campaign, reviewer=reviewer, workspace=row.workspace_id, kind=row.kind, key=row.key,
                      role=row.role, location=SourceLocation("", 0), name=row.workspace_name, why=row.why.text())  # type: ignore[arg-type]
