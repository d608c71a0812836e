"""The saved plan's checks, as pure functions: why a saved plan is stale, where an altered one differs."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from reconciler.errors import ApplyError
from reconciler.plan.model import Plan
from reconciler.plan.saved import first_difference, format_saved_plan, parse_saved_plan, refuse_altered, refuse_stale

FRESH = Plan(service="https://api.example", manifest_digest="m1", live_fingerprint="l1", state_lineage="L",
             state_serial=3)


def _stale(saved: Plan) -> str:
    with pytest.raises(ApplyError) as err:
        refuse_stale(saved, FRESH, "plan.json")
    return str(err.value)


def test_a_plan_saved_without_a_state_file_is_stale_once_one_exists() -> None:
    assert _stale(FRESH.model_copy(update={"state_lineage": "", "state_serial": 0})) == (
        "The saved plan plan.json is stale, so nothing was changed. It was made without a state file; one exists "
        "now. Run 'reconciler plan --out' again and review the new plan.")


def test_a_plan_saved_with_a_state_file_is_stale_once_there_is_none() -> None:
    with pytest.raises(ApplyError) as err:
        refuse_stale(FRESH, FRESH.model_copy(update={"state_lineage": "", "state_serial": 0}), "plan.json")
    assert str(err.value) == (
        "The saved plan plan.json is stale, so nothing was changed. It was made with a state file, and there is "
        "none now. Run 'reconciler plan --out' again and review the new plan.")


def test_a_plan_saved_against_another_lineage_names_that_and_not_the_serial() -> None:
    assert _stale(FRESH.model_copy(update={"state_lineage": "K", "state_serial": 9})) == (
        "The saved plan plan.json is stale, so nothing was changed. It was made against a different state file "
        "(the lineage differs). Run 'reconciler plan --out' again and review the new plan.")


def test_every_reason_a_plan_is_stale_is_said_in_order() -> None:
    saved = FRESH.model_copy(update={"manifest_digest": "m0", "state_serial": 2, "live_fingerprint": "l0"})
    assert _stale(saved) == (
        "The saved plan plan.json is stale, so nothing was changed. The manifests changed since it was made. "
        "The state moved on since it was made (serial 2, now 3). Access in the live service changed since it "
        "was made. Run 'reconciler plan --out' again and review the new plan.")


def test_a_plan_made_against_another_service_says_which() -> None:
    with pytest.raises(ApplyError) as err:
        refuse_stale(FRESH.model_copy(update={"service": "https://other.example"}), FRESH, "plan.json")
    assert str(err.value) == (
        "The saved plan plan.json was made against https://other.example, not https://api.example, so nothing "
        "was changed. Plan against this service and review that plan.")
    with pytest.raises(ApplyError) as err:
        refuse_stale(FRESH.model_copy(update={"service": ""}), FRESH, "plan.json")
    assert str(err.value).startswith(
        "The saved plan plan.json was made against another service, not https://api.example, so nothing")


def test_the_same_inputs_are_not_stale() -> None:
    refuse_stale(FRESH.model_copy(), FRESH, "plan.json")  # raises if refused


def test_the_first_difference_of_two_values_is_said_where_it_is() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}) is None
    assert first_difference({"a": 1}, {"a": 1, "b": "x"}) == "At b the saved plan has nothing; these inputs give 'x'."
    assert first_difference({"a": 1, "c": 2}, {"a": 1}) == "At c the saved plan has '2'; these inputs give nothing."
    assert first_difference({"x": {"y": [1, 2]}}, {"x": {"y": [1, 3]}}) == (
        "At x.y[1] the saved plan has '2'; these inputs give '3'.")
    assert first_difference([1], [1, 2]) == "At [1] the saved plan has no more items; these inputs give '2'."
    assert first_difference([{"key": "k"}], []) == (
        "At [0] ('k') the saved plan has '{\"key\": \"k\"}'; these inputs give no more items.")
    assert first_difference([{"address": "a"}], [{"address": "b"}]) == (
        "At [0] ('b').address the saved plan has 'a'; these inputs give 'b'.")


def test_a_value_that_is_no_string_is_quoted_as_sorted_json_cut_at_120_characters() -> None:
    assert first_difference({"v": {"b": "é", "a": 1}}, {"v": 2}) == (
        "At v the saved plan has '{\"a\": 1, \"b\": \"é\"}'; these inputs give '2'.")
    # 120 characters in all: the bracket, the quote, 117 x and the ellipsis.
    assert first_difference({"v": ["x" * 150]}, {"v": None}) == (
        "At v the saved plan has '[\"" + "x" * 117 + "…'; these inputs give 'null'.")


def test_an_altered_plan_is_refused_naming_its_first_difference() -> None:
    saved = FRESH.model_copy(update={"forgotten": ("workspace.gone",)})
    with pytest.raises(ApplyError) as err:
        refuse_altered(saved, FRESH, "plan.json")
    assert str(err.value) == (
        "The saved plan plan.json is not the plan that the manifests, the live service and the state give now, "
        "although they have not changed since it was made, so nothing was changed. At forgotten[0] the saved plan "
        "has 'workspace.gone'; these inputs give no more items. The file was edited after reconciler plan --out "
        "wrote it, or was made by another version of reconciler. A saved plan is only ever an approval of the plan "
        "these inputs give; run 'reconciler plan --out' again and review the new plan.")
    refuse_altered(FRESH.model_copy(), FRESH, "plan.json")  # the same plan: raises if refused


def test_a_saved_plan_is_indented_json_a_reviewer_can_read_and_parse_back() -> None:
    data = format_saved_plan(FRESH, PurePosixPath("../manifests"))
    assert data.startswith(b'{\n  "kind": "reconciler-plan",\n  "manifest_path": "../manifests",\n  "plan": {\n')
    assert data.endswith(b"}\n")
    assert parse_saved_plan(data, "plan.json") == (FRESH, PurePosixPath("../manifests"))


def test_the_live_fingerprint_is_the_sha256_of_the_documented_json_fed_a_workspace_at_a_time() -> None:
    """Issue 40: the fingerprint that binds a saved plan is streamed, never built whole; its definition (and so
    every saved plan's binding) is the one it always had, computed here by hand: ids sorted and once each, a
    workspace the listing lacks as null, non-ASCII escaped as json.dumps escapes it."""
    import hashlib
    import json

    from tests.conftest import live_of, live_workspace

    live = live_of(live_workspace("ws_b", {"zé@x.com": "owner", "a@x.com": "viewer"}, {"x.com": "viewer"}),
                   live_workspace("ws_a", {"q@y.com": "editor"}))
    doc = {"ws_a": {"domains": {}, "users": {"q@y.com": "editor"}},
           "ws_b": {"domains": {"x.com": "viewer"}, "users": {"a@x.com": "viewer", "zé@x.com": "owner"}},
           "ws_gone": None}
    by_hand = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    assert live.fingerprint(["ws_b", "ws_gone", "ws_a", "ws_b"]) == by_hand
    assert live.fingerprint([]) == hashlib.sha256(b"{}").hexdigest()
