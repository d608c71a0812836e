"""What a campaign's items mean: the one reading of the reviewers' decisions.

A campaign (``reconciler.manifest.reviews``) has one item per reviewer per
entry (a user or domain on a workspace): a workspace's two owners both hold
its entries.  What an entry's items decide together is written here once, and
read by the plan (``reconciler.plan.reviews``: what it revokes), ``review
close`` (which manifest lines it removes), ``review status`` and the evidence
(what is overdue) and ``reconciler audit`` (what it flags):

- a ``revoke`` from any reviewer decides the entry, else a ``keep`` from any;
- an entry nobody decided is undecided, and follows the campaign's ``onDue``
  once the due date has passed.

Each reviewer's own answers (``item.decision``, what ``review status`` counts
per reviewer) are the items themselves, not this.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.manifest.desired import DesiredCampaign, ReviewItem

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


def undecided_items(campaign: DesiredCampaign) -> list[ReviewItem]:
    """Every item of an entry nobody decided (each reviewer's), in the campaign's order."""
    deciding = deciding_items(campaign.items)
    return [item for item in campaign.items if deciding[entry_of(item)].decision is None]
