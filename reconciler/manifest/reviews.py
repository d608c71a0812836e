"""Access reviews under the manifests: ``reviews/<name>/campaign.yaml`` and one
``reviews/<name>/<reviewer email>.yaml`` per reviewer.

They are manifest files like the others: read by the same line-keeping YAML
loader, validated by pydantic models (``CampaignSpec``, ``DecisionsSpec``,
the source of ``schemas/review-campaign.schema.json`` and
``schemas/review-decisions.schema.json``), every problem ``file:line`` in
the one ``ManifestError`` of ``load_desired``.  Their bytes are part of the
manifests' digest, so a saved plan made before a reviewer's decision changed
is stale.

A campaign is a snapshot: ``reconciler review start`` wrote its items from one
read of the company, and each reviewer sets ``decision: keep`` or
``decision: revoke`` (with an optional ``reason``).  The plan carries out
the revocations (``reconciler.plan.reviews``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, BeforeValidator, Field, StrictBool, ValidationError

from reconciler.manifest.desired import Decision, DesiredCampaign, OnDue, ReviewItem, RuleMatch
from reconciler.manifest.desired import ReviewEntryKind as EntryKind
from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.models import Email, IsoDate, Key, RuleMatchSpec, _Spec
from reconciler.manifest.yaml_lines import LineDict, LineList
from reconciler.manifest.yaml_read import load_yaml
from reconciler.text import quoted
from reconciler.vocabulary import Role

REVIEWS_DIR = "reviews"
CAMPAIGN_FILE = "campaign.yaml"


class ReviewScopeSpec(_Spec):
    """Which access a campaign reviews: the workspaces (a rule's ``match``) and the entries."""

    match: RuleMatchSpec | None = Field(default=None, description="as a rule's match; default every workspace")
    entries: Literal["all", "external"] = Field(
        default="all", description="external: only users and domains outside policy.allowedDomains")


class TeamReviewersSpec(_Spec):
    team: Key = Field(description="a key of the manifests' teams: its members review every workspace")


class ReassignmentSpec(_Spec):
    """One ``reconciler review reassign``: undecided items moved from one reviewer's file to another's."""

    from_: Email = Field(alias="from", description="the reviewer whose undecided items were moved")
    to: Email = Field(description="the reviewer who received them")
    by: Email = Field(description="who reassigned them (--by, or git config user.email)")
    at: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")] = Field(
        description="when, in UTC")
    reason: Annotated[str, Field(min_length=1)]
    items: int = Field(ge=1, description="how many undecided items left the first reviewer's file")
    assignment: dict[str, Annotated[str, Field(pattern="^[0-9a-f]{64}$")] | None] = Field(description=(
        "the digests this reassignment set in the campaign's assignment (null: the file was left with no items "
        "and removed)"))


class CampaignSpec(_Spec):
    """``reviews/<name>/campaign.yaml``: one access review campaign."""

    campaign: Key = Field(description="the campaign's name: the name of its directory")
    started: IsoDate
    due: IsoDate
    onDue: OnDue = Field(default="flag", description="what an item still undecided after due becomes")
    scope: ReviewScopeSpec = Field(default_factory=ReviewScopeSpec)
    reviewers: Literal["owners"] | TeamReviewersSpec = Field(
        default="owners", description="owners: each workspace's owners review it; {team: NAME}: that team")
    fallback: Email | None = Field(default=None, description="reviews the workspaces that have no owner")
    closed: IsoDate | None = Field(default=None, description="set by reconciler review close")
    closedUndecided: int | None = Field(default=None, ge=1, description=(
        "set by reconciler review close --accept-undecided: how many items nobody had decided when it was closed"))
    assignment: dict[str, Annotated[str, Field(pattern="^[0-9a-f]{64}$")]] | None = Field(default=None, description=(
        "written by reconciler review start: each reviewer's file and the sha256 of the items it was given; the "
        "items are the campaign's snapshot, and only their decisions may be edited"))
    reassignments: tuple[ReassignmentSpec, ...] = Field(default=(), description=(
        "written by reconciler review reassign: who moved which reviewer's undecided items to whom, when and why"))
    closedDigest: str | None = Field(default=None, pattern="^[0-9a-f]{64}$", description=(
        "set by reconciler review close: sha256 of the reviewers' files as closed; a closed campaign whose "
        "files differ from it is refused"))


def _entry_key(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


class ReviewItemSpec(_Spec):
    """One access entry to decide on, as ``review start`` wrote it (a snapshot)."""

    workspace: Annotated[str, Field(min_length=1)]
    name: str | None = None
    kind: EntryKind
    key: Annotated[str, BeforeValidator(_entry_key), Field(min_length=1)]
    role: Role
    why: str = ""
    decision: Decision | None = Field(default=None, description="keep or revoke; null while undecided")
    reason: str | None = None
    removeFromTeam: StrictBool = Field(
        default=False, description="with revoke: review close also removes the person from the team granting it")


class DecisionsSpec(_Spec):
    """``reviews/<name>/<reviewer email>.yaml``: one reviewer's items and decisions."""

    reviewer: Email
    items: tuple[ReviewItemSpec, ...] = ()


class LoadedReviews(NamedTuple):
    campaigns: tuple[DesiredCampaign, ...]
    problems: list[Problem]
    files: list[tuple[str, bytes]]  # (name relative to the manifest root, bytes), for the digest


def items_digest(items: Iterable[tuple[str, str, str, str]]) -> str:
    """sha256 of one reviewer's items as review start assigned them: (workspace, kind, key, role) each, in
    order; the decisions, reasons and display fields (name, why) are not part of it."""
    canonical = json.dumps([[w, k, key.lower(), r] for w, k, key, r in items], separators=(",", ":"),
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def decisions_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """sha256 of a campaign's reviewer files (file name, then bytes, each length-prefixed, sorted by name):
    what ``review close`` records as ``closedDigest``, so that an edit after the close is seen."""
    digest = hashlib.sha256()
    for name, data in sorted(files):
        encoded = name.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big") + encoded + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def review_files(root: Path) -> list[tuple[Path, list[Path]]]:
    """(campaign directory, its YAML files) for every campaign under ``root/reviews``, sorted."""
    base = root / REVIEWS_DIR
    if not base.is_dir() or base.is_symlink():
        return []
    found = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
        found.append((directory, campaign_files(directory)))
    return found


def campaign_files(directory: Path) -> list[Path]:
    """A campaign directory's YAML files (campaign.yaml and the reviewers'), sorted: what is read, and what
    ``closedDigest`` covers."""
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def load_reviews(root: Path, decode: Callable[[bytes], str | tuple[int, str]]) -> LoadedReviews:
    """Every campaign under ``root/reviews``, each problem ``file:line``; ``decode``
    is the manifests' own (``load.decode_manifest``: UTF-8, or the line that is not)."""
    campaigns: list[DesiredCampaign] = []
    problems: list[Problem] = []
    files: list[tuple[str, bytes]] = []
    for directory, paths in review_files(root):
        parsed: dict[str, tuple[Any, str]] = {}
        raw: dict[str, bytes] = {}  # the reviewers' files as read, for a closed campaign's digest
        for path in paths:
            name = str(path)
            if not path.resolve().is_relative_to(root.resolve()):
                problems.append(Problem(SourceLocation(name, 1), "is a symlink to a file outside the manifest "
                                        "directory; refused unread: keep review files inside the directory"))
                continue
            data = path.read_bytes()
            files.append((path.relative_to(root).as_posix(), data))
            if path.name != CAMPAIGN_FILE:
                raw[path.name] = data
            text = decode(data)
            if isinstance(text, tuple):
                problems.append(Problem(SourceLocation(name, text[0]), text[1]))
                continue
            loaded = load_yaml(text, name)
            problems += loaded.problems
            if not loaded.fatal:
                parsed[path.name] = (loaded.document, name)
        campaign, found = _campaign(directory, parsed, raw)
        problems += found
        if campaign is not None:
            campaigns.append(campaign)
    return LoadedReviews(tuple(campaigns), problems, files)


def _validated(spec: type[BaseModel], document: Any, name: str) -> tuple[Any, list[Problem]]:
    from reconciler.manifest.messages import problems_from_errors

    if not isinstance(document, LineDict):
        what = "a campaign" if spec is CampaignSpec else "a reviewer's decisions"
        return None, [Problem(SourceLocation(name, getattr(document, "line", 1)),
                              f"{what} file must be a mapping (see reconciler review start)")]
    try:
        return spec.model_validate(document), []
    except ValidationError as exc:
        return None, problems_from_errors(exc.errors(), document, name, spec)


def _campaign(directory: Path, parsed: dict[str, tuple[Any, str]],
              raw: dict[str, bytes]) -> tuple[DesiredCampaign | None, list[Problem]]:
    if CAMPAIGN_FILE not in parsed:
        where = next(iter(parsed.values()))[1] if parsed else str(directory)
        return None, [Problem(SourceLocation(where, 1), (
            f"review {quoted(directory.name)} has no {CAMPAIGN_FILE}; start a campaign with reconciler review start"))]
    document, name = parsed.pop(CAMPAIGN_FILE)
    spec, problems = _validated(CampaignSpec, document, name)
    if spec is not None and spec.campaign != directory.name:
        problems.append(Problem(SourceLocation(name, document.key_lines["campaign"]), (
            f"campaign: {quoted(spec.campaign)} is not the name of its directory {quoted(directory.name)}; "
            "keep them the same")))
    if spec is not None and spec.closedDigest is not None and spec.closedDigest != decisions_digest(raw.items()):
        problems.append(Problem(SourceLocation(name, document.key_lines["closedDigest"]), (
            f"the campaign was closed on {spec.closed} and its reviewers' files have changed since (closedDigest "
            "no longer matches them): a closed campaign's decisions are final. Put the files back as they were "
            f"closed (git checkout of {REVIEWS_DIR}/{directory.name}/), or start a new campaign for new decisions")))
    items: list[ReviewItem] = []
    reviewers: list[tuple[str, str]] = []
    missing = None
    if spec is not None and spec.assignment is not None:
        missing = _missing_reviewers(directory, spec.assignment, parsed, name, document)
        problems += missing.problems
    for file_name, (doc, shown) in sorted(parsed.items()):
        decisions, found = _validated(DecisionsSpec, doc, shown)
        problems += found
        if decisions is None:
            continue
        if spec is not None and spec.assignment is not None:
            unsealed = _unsealed(spec.assignment, file_name, decisions, doc, shown)
            if unsealed is not None:
                problems.append(unsealed)
                continue
        stem = file_name.rsplit(".", 1)[0].lower()
        if decisions.reviewer != stem:
            problems.append(Problem(SourceLocation(shown, doc.key_lines["reviewer"]), (
                f"reviewer: {quoted(decisions.reviewer)} is not the file's name {quoted(file_name)}; "
                "each reviewer's file is named after their email")))
            continue
        reviewers.append((decisions.reviewer, shown))
        items += _items(directory.name, decisions, doc, shown)
    if missing is not None and missing.items:  # in reviewer (file) order, as if the files were there
        items = sorted(items + missing.items, key=lambda i: (i.location.file, i.position))
        reviewers = sorted(reviewers + missing.reviewers, key=lambda r: r[1])
    if spec is None or problems:
        return None, problems
    return _desired_campaign(spec, document, name, tuple(items), tuple(reviewers)), problems


class _Missing(NamedTuple):
    items: list[ReviewItem]
    reviewers: list[tuple[str, str]]
    problems: list[Problem]


def _missing_reviewers(directory: Path, assignment: dict[str, str], parsed: dict[str, tuple[Any, str]], name: str,
                       document: LineDict) -> _Missing:
    """A reviewer's file review start wrote that is gone is not fewer items: its items, as the last copy git
    holds (checked against the assignment's digest), are undecided, whatever that copy decided.  When git
    holds no such copy, nothing can say what they were: a problem."""
    found = _Missing([], [], [])
    for file_name in sorted(set(assignment) - set(parsed)):
        path = directory / file_name
        if _plain_file_name(file_name) and (path.exists() or path.is_symlink()):
            continue  # there but not read: its own problem says why
        recovered, why = _recovered(directory, file_name, assignment[file_name]) if _plain_file_name(file_name) \
            else (None, "it names no file of the campaign's folder")
        if recovered is None:
            found.problems.append(Problem(SourceLocation(name, document.key_lines.get("assignment", 1)), (
                f"the reviewer's file {quoted(file_name)} that review start wrote is missing, and {why}: its items "
                "cannot go unseen; put the file back as it was written (git checkout, or a copy from the commit "
                "that has it)")))
            continue
        found.reviewers.append((file_name.rsplit(".", 1)[0].lower(), str(path)))
        found.items.extend(item._replace(decision=None, reason=None, remove_from_team=False) for item in recovered)
    return found


def _plain_file_name(file_name: str) -> bool:
    return Path(file_name).name == file_name and not file_name.startswith(".") and "\\" not in file_name


def _recovered(directory: Path, file_name: str, digest: str) -> tuple[list[ReviewItem] | None, str]:
    """The items of the last committed copy of a missing reviewer's file, when they are the ones sealed."""
    from reconciler.manifest.git_history import committed_copy

    path = directory / file_name
    copy = committed_copy(path)
    if copy is None:
        return None, "git holds no copy of it to read its items from"
    commit, data = copy
    try:
        loaded = load_yaml(data.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        loaded = None
    decisions, found = _validated(DecisionsSpec, loaded.document, str(path)) if loaded and not loaded.fatal \
        else (None, [])
    if decisions is None or found or decisions.reviewer != file_name.rsplit(".", 1)[0].lower() or items_digest(
            (i.workspace, i.kind, i.key, i.role) for i in decisions.items) != digest:
        return None, f"its copy in git (commit {commit[:12]}) does not hold the items review start assigned it"
    return _items(directory.name, decisions, loaded.document, str(path)), ""  # type: ignore[union-attr]


def _unsealed(assignment: dict[str, str], file_name: str, decisions: DecisionsSpec, document: LineDict,
              shown: str) -> Problem | None:
    """A reviewer's file whose items are not the ones review start assigned it (or that it never wrote)."""
    if file_name not in assignment:
        return Problem(SourceLocation(shown, 1), (
            f"review start assigned no items to {quoted(file_name)} (campaign.yaml's assignment names the "
            "reviewers' files): a reviewer's file cannot be added to a campaign; start a new campaign instead"))
    found = items_digest((i.workspace, i.kind, i.key, i.role) for i in decisions.items)
    if found == assignment[file_name]:
        return None
    return Problem(SourceLocation(shown, document.key_lines.get("items", 1)), (
        "these items are not the ones review start assigned to this file (an item added, removed, changed, or "
        "moved from another reviewer's file): only decision, reason and removeFromTeam may be edited; put the "
        "items back as they were written (git checkout)"))


def _items(campaign: str, decisions: DecisionsSpec, document: LineDict, name: str) -> list[ReviewItem]:
    raw = document.get("items")
    found = []
    for index, item in enumerate(decisions.items):
        node = raw[index] if isinstance(raw, LineList) else None
        line = node.key_lines.get("decision", node.line) if isinstance(node, LineDict) else 1
        found.append(ReviewItem(
            campaign=campaign, reviewer=decisions.reviewer, workspace=item.workspace, kind=item.kind,
            key=item.key, role=item.role, location=SourceLocation(name, line), name=item.name, why=item.why,
            decision=item.decision, reason=item.reason, remove_from_team=item.removeFromTeam, position=index))
    return found


def _desired_campaign(spec: CampaignSpec, document: LineDict, name: str, items: tuple[ReviewItem, ...],
                      reviewers: tuple[tuple[str, str], ...]) -> DesiredCampaign:
    match = None
    scope = document.get("scope")
    if spec.scope.match is not None and isinstance(scope, LineDict):
        m = spec.scope.match
        match = RuleMatch(all=m.all is True, accounts=m.accounts, templates=m.templates, names=m.names,
                          except_ids=m.except_, location=SourceLocation(name, scope.key_lines["match"]))
    chosen = spec.reviewers if isinstance(spec.reviewers, str) else f"team:{spec.reviewers.team}"
    return DesiredCampaign(
        name=spec.campaign, location=SourceLocation(name, 1), started=spec.started, due=spec.due,
        on_due=spec.onDue, match=match, entries=spec.scope.entries, reviewers=chosen, fallback=spec.fallback,
        closed=spec.closed, items=items, reviewer_files=reviewers)



def review_json_schema_text(kind: Literal["campaign", "decisions"]) -> str:
    """The JSON Schema of a campaign file or a reviewer's file, as committed in schemas/."""
    import json

    from reconciler.manifest.schema import JSON_SCHEMA_DIALECT

    spec: type[BaseModel] = CampaignSpec if kind == "campaign" else DecisionsSpec
    schema = spec.model_json_schema()
    schema["title"] = ("Workspace reconciler access review campaign" if kind == "campaign"
                       else "Workspace reconciler access review: one reviewer's decisions")
    return json.dumps({"$schema": JSON_SCHEMA_DIALECT, **schema}, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import sys

    print(review_json_schema_text("campaign" if sys.argv[1:] == ["campaign"] else "decisions"), end="")
