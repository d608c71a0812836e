"""What apply says when the service refuses a change, word for word: the
service's answer, then what the refusal means for that kind of change (an
asset's unknown tags, a creation the company may not make), then what was
made, what was not, and what was not attempted.

The examples/onboarding company (its assets and its group) and a one-list
company on the in-process emulator; the refusals are the emulator's own (an
unknown tag id) or injected (a 403, a 500 on one role change).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError
from reconciler.live import PLAN_PROPERTIES, fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import Plan, make_plan
from reconciler.plan.model import AccessChange
from reconciler.plan.planner import wanted_workspaces
from reconciler.state import State, load_state
from tests.e2e.conftest import EmulatorRig, client_for, onboarding_rig, seed_company

KICKOFF = "group.customer-inc.workspace.kickoff"


def not_attempted(plan: Plan, address: str) -> str:
    """The sentence that ends a stop at ``address`` (the first change made): what came after it."""
    after = len(plan.changes) - 1 - [c.address for c in plan.changes].index(address)
    if after == 0:
        return "No change came after it."
    return f"The {after} change{'s' if after > 1 else ''} after it {'was' if after == 1 else 'were'} not attempted."


def with_unknown_tag(rig: EmulatorRig, tags: str, unknown: str) -> None:
    """The manifest gives an asset a tag the company does not have (the service answers 400 for it)."""
    assets = rig.root / "assets.yaml"
    text = assets.read_text(encoding="utf-8")
    assert text.count(f"tags: [{tags}]") == 1
    assets.write_text(text.replace(f"tags: [{tags}]", f"tags: [{tags}, {unknown}]"), encoding="utf-8")


def test_an_embed_refused_with_400_for_an_unknown_tag_says_to_check_its_tags(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    with_unknown_tag(rig, "tag_onboarding, tag_pricing", "tag_nope")
    plan = rig.plan(targets=["asset.booking"])
    assert [c.address for c in plan.changes] == ["asset.booking"]

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        f"Apply stopped at asset.booking ({rig.root / 'assets.yaml'}:24): The service answered 400 BAD_REQUEST to "
        "POST /assets: Tag tag_nope not found. The service did not accept the request as sent; check the values "
        "involved, and if they look right, report this as a bug in reconciler. Check that the tags tag_onboarding, "
        "tag_pricing, tag_nope exist for this company (the service answers 400 for an unknown tag id). None of the "
        "plan's changes was made before this one. This change was not made. No change came after it. Run "
        "'reconciler plan' to see what remains.")


def test_a_file_asset_whose_creation_is_never_accepted_says_it_was_not_made_and_to_check_its_tags(
        tmp_path: Path, clock: VirtualClock) -> None:
    """POST /assets answers 400 to every try (an unknown tag, which looks like bytes not yet visible): the
    wait runs out, an error of the client's own with no status and no outcome of its own."""
    rig = onboarding_rig(tmp_path, clock)
    with_unknown_tag(rig, "tag_pricing", "tag_nope")
    plan = rig.plan(targets=["asset.pricing-sheet", "asset.website"])
    assert [c.address for c in plan.changes] == ["asset.pricing-sheet", "asset.website"]

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    (made,) = [f.id for f in rig.company.files]
    assert str(stopped.value) == (
        f"Apply stopped at asset.pricing-sheet ({rig.root / 'assets.yaml'}:9): POST /assets still answered 400 after "
        f"6 attempts over 60 seconds: Tag tag_nope not found. The bytes of file {made} may not have been uploaded, "
        "or the request may be wrong. Check that the tags tag_pricing, tag_nope exist for this company (the service "
        "answers 400 for an unknown tag id). None of the plan's changes was made before this one. This change was "
        "not made. The 1 change after it was not attempted. Run 'reconciler plan' to see what remains.")


def test_a_creation_refused_with_403_on_a_plan_that_did_not_count_the_workspaces_says_their_number_is_unknown(
        tmp_path: Path, clock: VirtualClock) -> None:
    # A plan made (through the library) from a listing that stopped once the workspaces it names were
    # seen: it never learned how many workspaces the company has.
    rig = onboarding_rig(tmp_path, clock)
    desired, state = load_desired(rig.root), load_state(rig.state_path)
    live = fetch_live(rig.client(), wanted_workspaces(desired, state), properties=PLAN_PROPERTIES)
    plan = make_plan(desired, live, state, targets=[KICKOFF])
    assert plan.live_workspaces is None and plan.changes[0].address == KICKOFF
    rig.emulator.faults.inject("POST", "/connected-workspaces$", status=403, times=None)

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31): The service answered 403 FORBIDDEN to POST "
        "/workspaces/ws_home/connected-workspaces: Injected fault: 403. The token's company may not do this; "
        "publishing workspaces also needs a verified company. The service refuses new workspaces for two documented "
        "reasons: the company is on the free plan, which allows 10 workspaces in total, active and archived (it had "
        "an unknown number when the plan was made), or the company is not verified, and only verified companies "
        "may publish workspaces. A company without workspace credits left is refused too. None of the plan's "
        f"changes was made before this one. This change was not made. {not_attempted(plan, KICKOFF)} Run "
        "'reconciler plan' to see what remains.")


def test_a_list_whose_third_role_change_fails_names_the_two_made_before_it(
        tmp_path: Path, clock: VirtualClock) -> None:
    emulator = Emulator.from_seed(seed_company([{"id": "ws_1", "name": "One", "published": True, "users": [
        {"email": "ops@acme.com", "role": "owner"}, {"email": "a@acme.com", "role": "editor"},
        {"email": "b@acme.com", "role": "editor"}, {"email": "c@acme.com", "role": "editor"}]}]), clock=clock)
    client = client_for(emulator, clock)
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("version: 1\nworkspaces:\n  one:\n    id: ws_1\n    access:\n      users:\n"
                        "        - {email: ops@acme.com, role: owner}\n        - {email: a@acme.com, role: viewer}\n"
                        "        - {email: b@acme.com, role: viewer}\n        - {email: c@acme.com, role: viewer}\n",
                        encoding="utf-8")
    plan = make_plan(load_desired(manifest), fetch_live(client, ["ws_1"]), State())
    (change,) = plan.changes
    assert isinstance(change, AccessChange) and change.strategy == "patch"
    assert [e.key for e in change.entries] == ["a@acme.com", "b@acme.com", "c@acme.com"]
    emulator.faults.inject("PATCH", f"/workspace-users/{change.entries[2].entry_id}$", status=500, times=None)

    with pytest.raises(ApplyError) as stopped:
        apply_plan(plan, client=client, state=State(), state_path=tmp_path / "state.json")
    refused = change.entries[2].entry_id
    assert str(stopped.value) == (
        f"Apply stopped at workspace.one ({manifest}:5): The service answered 500 INTERNAL_SERVER_ERROR to PATCH "
        f"/workspace-users/{refused}: Injected fault: 500. The service failed after 4 attempts; try again later. The "
        "change may or may not have been made; repeating the call is safe. None of the plan's changes was made before "
        "this one. Of this change, the role changes of user a@acme.com (editor -> viewer), user b@acme.com (editor "
        "-> viewer) were made before the failure. No change came after it. Run 'reconciler plan' to see what "
        "remains.")
