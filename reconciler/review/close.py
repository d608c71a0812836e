"""``review close``: the manifest edits a campaign's revocations imply, and ``closed: <date>``.

A revoke decision against an entry a manifest line grants is refused by the
plan (the two would undo each other); closing the campaign removes that line,
so the pull request's diff is itself the record of what the review changed:

- an explicit ``users:``/``domains:`` entry of the list the workspace holds is removed;
- a team membership is removed only where the reviewer chose so
  (``removeFromTeam: true`` on the item): leaving a team takes the person off
  every list that names it, which is more than the one item decided; and
  never over another reviewer's ``keep`` of that person on another list the
  team grants them: close names both decisions and changes nothing;
- a rule's ``ensure`` is never edited (it reaches every matching workspace):
  the summary names the line to change by hand.

The files are edited with ruamel.yaml's round trip, on purpose: it keeps every
other line, comment, quote and flow mapping as written (PyYAML would drop the
comments and reformat the file), so the diff holds only the removed lines.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

from reconciler.manifest.desired import AccessList, Desired, DesiredCampaign, DesiredGroup, ReviewItem
from reconciler.manifest.location import SourceLocation
from reconciler.manifest.review_meaning import deciding_items, entry_of, keeps_against_leaving
from reconciler.state.model import State


class Edit(NamedTuple):
    """One manifest line to remove."""

    file: str
    path: tuple[str, ...]  # keys down to the list holding the line (groups, KEY, access, users)
    field: str | None  # the item's key field (email, domain); None for a team's list of emails
    key: str
    location: SourceLocation
    item: ReviewItem
    what: str  # for the summary


class Closing(NamedTuple):
    edits: list[Edit]
    notes: list[str]  # grants close does not edit, with the line to change
    conflicts: list[str] = []  # a team removal against another reviewer's keep: close refuses, naming both


def effective_revokes(campaign: DesiredCampaign) -> list[ReviewItem]:
    """The revokes that decide their entry (``reconciler.manifest.review_meaning``), in the campaign's
    order: the decisions the plan carries out."""
    deciding = deciding_items(campaign.items)
    return [item for item in campaign.items if item.decision == "revoke" and deciding[entry_of(item)] is item]


def _lists(desired: Desired, state: State) -> dict[str, tuple[str, tuple[str, ...], AccessList]]:
    """Workspace id -> (address, path of its list in the file, the list), for every list a manifest names."""
    return {workspace_id: (node.address, ("groups" if isinstance(node, DesiredGroup) else "workspaces", node.key,
                                          "access"), node.access)
            for workspace_id, node in desired.list_holders(state.recorded_id) if node.access is not None}


def plan_close(desired: Desired, campaign: DesiredCampaign, state: State) -> Closing:
    """What closing ``campaign`` edits, and what it leaves for a person to change."""
    lists = _lists(desired, state)
    teams = {t.key: t for t in desired.teams}
    edits: dict[tuple[str, tuple[str, ...], str], Edit] = {}
    notes: list[str] = []
    conflicts: list[str] = []
    deciding = deciding_items(campaign.items)
    named = {workspace: (address, access) for workspace, (address, _, access) in lists.items()}
    for item in effective_revokes(campaign):
        reach = lists.get(item.workspace)
        if reach is not None:
            address, path, access = reach
            entries = access.users if item.kind == "user" else access.domains
            explicit = next((e for e in entries if (e.email if item.kind == "user" else e.domain) == item.key), None)  # type: ignore[union-attr]
            if explicit is not None:
                field = "email" if item.kind == "user" else "domain"
                edit = Edit(explicit.location.file, (*path, "users" if item.kind == "user" else "domains"), field,
                            item.key, explicit.location, item, f"{item.kind} {item.key} from {address}")
                edits.setdefault((edit.file, edit.path, item.key), edit)
                continue
            for ref in access.teams if item.kind == "user" else ():
                team = teams.get(ref.team)
                member = next((m for m in team.members if m.email == item.key), None) if team else None
                if member is None:
                    continue
                if item.remove_from_team:
                    kept = keeps_against_leaving(item, ref.team, deciding, named)
                    if kept:
                        conflicts += [_team_conflict(item, ref.team, member.location, other, where)
                                      for other, where in kept]
                        continue
                    edit = Edit(member.location.file, ("teams", ref.team), None, item.key, member.location, item,
                                f"{item.key} from team {ref.team}")
                    edits.setdefault((edit.file, edit.path, item.key), edit)
                else:
                    notes.append(f"{item.location}: {item.key} on {item.workspace} is granted by team {ref.team} "
                                 f"({member.location}); kept in the team (set removeFromTeam: true on the item to "
                                 "remove them from it)")
        for rule in desired.rules:
            ensured = rule.ensure_users if item.kind == "user" else rule.ensure_domains
            for entry in ensured:
                if (entry.email if item.kind == "user" else entry.domain) == item.key:  # type: ignore[union-attr]
                    notes.append(f"{item.location}: {item.key} is ensured by rule {rule.key} ({entry.location}) "
                                 "wherever it matches; change the rule by hand if it should not reach "
                                 f"{item.workspace}")
    return Closing(list(edits.values()), notes, conflicts)


def _team_conflict(item: ReviewItem, team: str, at: SourceLocation, other: ReviewItem, where: str) -> str:
    return (f"{item.location}: {item.reviewer} revokes user {item.key} on {item.workspace} with removeFromTeam: "
            f"true, which takes them out of team {team} ({at}) and so off {where} too, where {other.reviewer} "
            f"decided keep on {other.workspace} ({other.location})")


def round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, order, quotes and flow style kept
    yaml.preserve_quotes = True
    # Never fold a line the file did not fold: a width past any line's length (a team of hundreds written
    # on one line passed the 4,096 once used, and close split it in two; found by the mutation tests).
    yaml.width = sys.maxsize
    yaml.indent(mapping=2, sequence=4, offset=2)  # the manifests' own style ("users:\n  - {...}")
    return yaml


def edited_texts(edits: list[Edit], read: Any = Path.read_text) -> dict[str, str]:
    """File -> its new text, with every edit of it made."""
    yaml = round_trip_yaml()
    by_file: dict[str, list[Edit]] = {}
    for edit in edits:
        by_file.setdefault(edit.file, []).append(edit)
    texts: dict[str, str] = {}
    for file, file_edits in by_file.items():
        document = yaml.load(read(Path(file), encoding="utf-8"))
        for edit in file_edits:
            _remove(document, edit)
        out = io.StringIO()
        yaml.dump(document, out)
        texts[file] = out.getvalue()
    return texts


def _remove(document: Any, edit: Edit) -> None:
    node = document
    for key in edit.path:
        node = node[key]
    for index in reversed([i for i, _ in _matching(node, edit)]):
        del node[index]  # the list's other items, and their comments, stay as written


def _matching(items: Any, edit: Edit) -> Iterator[tuple[int, Any]]:
    for index, value in enumerate(items):
        found = value.get(edit.field) if edit.field is not None and hasattr(value, "get") else value
        if isinstance(found, str) and found.strip().lower() == edit.key:
            yield index, value


def closed_campaign_text(text: str, today: date, digest: str, undecided: int = 0) -> str:
    """The campaign file with ``closed: <today>`` and ``closedDigest`` (the reviewers' files as closed) set,
    and ``closedUndecided: N`` when it was closed with ``undecided`` items nobody decided; every other line
    as it was."""
    yaml = round_trip_yaml()
    document = yaml.load(text)
    document["closed"] = today
    if undecided:
        document["closedUndecided"] = undecided
    document["closedDigest"] = digest
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()
