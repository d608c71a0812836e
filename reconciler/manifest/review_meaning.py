"""What a campaign's items mean: the one reading of the reviewers' decisions.

A campaign (``reconciler.manifest.reviews``) has one item per reviewer per
entry (a user or domain on a workspace): a workspace's two owners both hold
its entries.  What an entry's items decide together is written here once, and
read by the plan (``reconciler.plan.reviews``: what it revokes), ``review
close`` (which manifest lines it removes), ``review status`` and the evidence
(what is overdue) and ``reconciler audit`` (what it flags):

- a ``revoke`` from any reviewer decides the entry, else a ``keep`` from any;
- an entry nobody decided is undecided, and follows the campaign's ``onDue``
  once the due date has passed;
- a revoke with ``removeFromTeam: true`` takes the person out of the team,
  so it stands against another reviewer's ``keep`` of them on another list
  the team puts them on (``keeps_against_leaving``): the plan names it and
  carries out neither, close refuses it.

Each reviewer's own answers (``item.decision``, what ``review status`` counts
per reviewer) are the items themselves, not this.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reconciler.manifest.desired import AccessList, DesiredCampaign, ReviewItem

# (workspace id, kind, key): one entry under review, whoever reviews it.
Entry = tuple[str, str, str]


def entry_of(item: ReviewItem) -> Entry:
    """The entry ``item`` reviews."""
    return (item.workspace, item.kind, item.key)


def deciding_items(items: Iterable[ReviewItem]) -> dict[Entry, ReviewItem]:
    """Per entry, in the order the entries first appear, the item whose decision holds: the first
    revoke, else the first keep; for an entry nobody decided, its first item (``decision`` None)."""
    found: dict[Entry, ReviewItem] = {}
    for item in items:
        entry = entry_of(item)
        held = found.get(entry)
        if held is None or _outranks(item, held):
            found[entry] = item
    return found


def _outranks(item: ReviewItem, held: ReviewItem) -> bool:
    """Whether ``item``, later in the file order, decides instead of ``held``."""
    return (item.decision == "revoke" and held.decision != "revoke") or (
        item.decision == "keep" and held.decision is None)


def keeps_against_leaving(item: ReviewItem, team: str, deciding: Mapping[Entry, ReviewItem],
                          lists: Mapping[str, tuple[str, AccessList]]) -> list[tuple[ReviewItem, str]]:
    """The keeps, by another reviewer, of ``item``'s person on another list that has them through ``team``
    (not by an entry of its own), each with that list's address: taking them out of the team
    (``removeFromTeam: true``) would take them off those lists too.  ``lists``: workspace id -> (address,
    list) of every list a manifest names; ``deciding``: the campaign's ``deciding_items``."""
    address = lists[item.workspace][0] if item.workspace in lists else None
    found = []
    for other in deciding.values():
        if (other.decision != "keep" or other.kind != "user" or other.key != item.key
                or other.reviewer == item.reviewer or other.workspace not in lists):
            continue
        other_address, access = lists[other.workspace]
        if other_address == address or not any(ref.team == team for ref in access.teams):
            continue
        if any(entry.email == item.key for entry in access.users):
            continue  # an entry of that list keeps them there whatever the team holds
        found.append((other, other_address))
    return found


def undecided_items(campaign: DesiredCampaign) -> list[ReviewItem]:
    """Every item of an entry nobody decided (each reviewer's), in the campaign's order."""
    deciding = deciding_items(campaign.items)
    return [item for item in campaign.items if deciding[entry_of(item)].decision is None]
