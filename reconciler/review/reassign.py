"""``review reassign``: one reviewer's undecided items moved to another, recorded in the campaign.

The campaign's items are sealed (``assignment`` in ``campaign.yaml``: which reviewer's file holds
which items); moving items by hand is refused like any other edit of them.  Reassigning is this
command: it rewrites the two reviewers' files, sets their new digests in ``assignment`` and appends
to ``reassignments`` who moved how many items, when (UTC), why, and the digests it set, so that the
new assignment is the one every later command accepts and the old one is refused.

What it refuses, before anything is written: a closed campaign; a ``--from`` with no file in the
campaign, or nothing undecided; a ``--to`` that is the same person, being offboarded (a rule revokes
them), that cannot name a reviewer's file, or that holds an entry among the items (no one reviews
their own access).  Decided items stay with their reviewer, with their decisions.
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import NamedTuple

from reconciler.errors import ConfigError
from reconciler.manifest.desired import Desired, DesiredCampaign, ReviewItem
from reconciler.manifest.review_meaning import entry_of
from reconciler.manifest.reviews import items_digest
from reconciler.review.close import round_trip_yaml
from reconciler.review.start import reviewer_file_problem
from reconciler.review.yaml_out import decisions_yaml
from reconciler.text import printable

_KIND_ORDER = {"user": 0, "domain": 1}


class Reassignment(NamedTuple):
    """The files to write (name in the campaign's folder -> text; None: remove it) and what moved."""

    files: dict[str, str | None]
    moved: int
    held_already: int  # items of an entry the new reviewer already reviews: dropped from the old file


def plan_reassign(desired: Desired, campaign: DesiredCampaign, campaign_text: str, *, source: str, target: str,
                  reason: str, by: str, at: datetime) -> Reassignment:
    """What reassigning ``source``'s undecided items of ``campaign`` to ``target`` writes."""
    name = campaign.name
    say = f"review reassign {name}"
    if campaign.closed is not None:
        raise ConfigError(f"{say}: the campaign was closed on {campaign.closed.isoformat()}; a closed campaign's "
                          "decisions are final, and so is who made them. Nothing was changed.")
    files = dict(campaign.reviewer_files)
    if source not in files:
        known = ", ".join(sorted(files)) or "none"
        raise ConfigError(f"{say}: --from {printable(source)} has no reviewer's file in the campaign (its reviewers: "
                          f"{printable(known)}). Nothing was changed.")
    _check_target(desired, say, source, target)
    theirs = [i for i in campaign.items if i.reviewer == source]
    undecided = [i for i in theirs if i.decision is None]
    if not undecided:
        raise ConfigError(f"{say}: {printable(source)} has no undecided item to reassign. Nothing was changed.")
    own = [i for i in undecided if i.kind == "user" and i.key == target]
    if own:
        listed = "; ".join(f"user {printable(i.key)} on {printable(i.workspace)} ({i.location})" for i in own)
        raise ConfigError(f"{say}: {printable(target)} would review their own access: {listed}. No one reviews their "
                          f"own access: reassign to someone else, or leave {'that item' if len(own) == 1 else 'those items'} "
                          f"with {printable(source)}. Nothing was changed.")
    kept = [i for i in theirs if i.decision is not None]
    already = {entry_of(i) for i in campaign.items if i.reviewer == target}
    moving = [i for i in undecided if entry_of(i) not in already]
    received = sorted([i for i in campaign.items if i.reviewer == target]
                      + [i._replace(reviewer=target) for i in moving],
                      key=lambda i: (i.workspace, _KIND_ORDER[i.kind], i.key))
    source_file, target_file = f"{source}.yaml", f"{target}.yaml"
    written: dict[str, str | None] = {
        source_file: decisions_yaml(name, campaign.due, source, kept) if kept else None,
        target_file: decisions_yaml(name, campaign.due, target, received)}
    digests = {source_file: _digest(kept) if kept else None, target_file: _digest(received)}
    written["campaign.yaml"] = _campaign_text(campaign_text, digests, {
        "from": source, "to": target, "by": by, "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "reason": reason,
        "items": len(undecided)})
    return Reassignment(written, moved=len(moving), held_already=len(undecided) - len(moving))


def _check_target(desired: Desired, say: str, source: str, target: str) -> None:
    if target == source:
        raise ConfigError(f"{say}: --to is --from ({printable(source)}); give another reviewer. Nothing was changed.")
    problem = reviewer_file_problem(target)
    if problem is not None:
        raise ConfigError(f"{say}: --to {printable(target)} cannot name a reviewer's file: {problem}. Nothing was "
                          "changed.")
    for rule in desired.rules:
        leaving = next((r for r in rule.revoke_users if r.key == target), None)
        if leaving is not None:
            raise ConfigError(f"{say}: --to {printable(target)} is being offboarded (rule {rule.key} revokes them at "
                              f"{leaving.location}), and a person leaving reviews nothing. Give another reviewer. "
                              "Nothing was changed.")


def _digest(items: list[ReviewItem]) -> str:
    return items_digest((i.workspace, i.kind, i.key, i.role) for i in items)


def _campaign_text(text: str, digests: dict[str, str | None], record: dict[str, object]) -> str:
    """The campaign file with the new digests in ``assignment`` and the reassignment appended to
    ``reassignments``; every other line as it was."""
    yaml = round_trip_yaml()
    document = yaml.load(text)
    assignment = document.get("assignment")
    if assignment is None:
        raise ConfigError("review reassign: the campaign was started before review start sealed its items (no "
                          "assignment in campaign.yaml): start a new campaign to reassign. Nothing was changed.")
    for file_name, digest in digests.items():
        if digest is None:
            assignment.pop(file_name, None)
        else:
            assignment[file_name] = digest
    if "reassignments" not in document:
        document["reassignments"] = []
    document["reassignments"].append({**record, "assignment": dict(digests)})
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()

