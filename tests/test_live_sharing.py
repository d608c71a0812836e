"""Which workspaces share an access list, by the entry ids they show (reconciler.live.shared_entries): for any
listing, each workspace maps to exactly the other workspaces showing one of its entry ids, and a workspace
sharing nothing is left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconciler.live import shared_entries

listings = st.dictionaries(st.sampled_from([f"ws_{i}" for i in range(8)]),
                           st.lists(st.sampled_from([f"e{i}" for i in range(12)]), max_size=6), max_size=8)


@given(listings)
def test_each_workspace_maps_to_every_other_workspace_showing_one_of_its_entry_ids(
        entry_ids: dict[str, list[str]]) -> None:
    by_definition = {w: {o for o, theirs in entry_ids.items() if o != w and set(ids) & set(theirs)}
                     for w, ids in entry_ids.items()}
    assert shared_entries(entry_ids) == {w: others for w, others in by_definition.items() if others}


def test_a_listing_where_no_entry_is_shared_shares_nothing() -> None:
    assert shared_entries({"ws_1": ["a", "b"], "ws_2": ["c"], "ws_3": []}) == {}
