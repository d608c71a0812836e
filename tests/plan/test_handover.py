"""What the planner says of a workspace no manifest names that it leaves to a person."""

from __future__ import annotations

from reconciler.plan.handover import ownerless_needs_person
from reconciler.plan.model import AccessChange, AccessSnapshot, Action, EntryChange


def test_an_ownerless_workspace_no_rule_matches_any_more_is_left_to_a_person_saying_why() -> None:
    # The rules once put sec@ there and match it no more; its owner was taken off by hand.
    change = AccessChange(
        address="unmanaged.ws_1", workspace_id="ws_1", workspace_name="Old", governs="rules", rules=(),
        authoritative=False, strategy="replace",
        entries=(EntryChange(kind="user", key="sec@acme.com", action=Action.DELETE, before="viewer"),),
        before=AccessSnapshot(users={"sec@acme.com": "viewer"}), after=AccessSnapshot())
    item = ownerless_needs_person(change, ())
    assert (item.kind, item.cause, item.reason, item.check) == (
        "access", "ownerless",
        'ws_1 "Old": its list has no owner now, and the rules would take back what they had put there; a list '
        "without an owner is left to a person",
        "Give it an owner in the web app, or name it in a manifest with an owner.")
