"""Which workspaces share an access list, by the entry ids they show (reconciler.live.shared_entries): for any
listing, each workspace maps to exactly the other workspaces showing one of its entry ids, and a workspace
sharing nothing is left out.  ``one_list_each`` groups any of the listed workspaces by the list they hold:
sharing an entry id, directly or through others of them, or joined as one group."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconciler.live import Live, LiveEntry, LiveWorkspace, one_list_each, shared_entries

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


def _grouped_by_definition(entry_ids: dict[str, list[str]], among: list[str],
                           joined: list[tuple[str, str]]) -> list[list[str]]:
    """Groups of ``among``: the closure of "shows an entry id the other shows" and ``joined``, each
    sorted, the groups in the order of their first workspace in ``among``."""
    links = {(a, b) for a in among for b in among if set(entry_ids[a]) & set(entry_ids[b])}
    links |= {(a, b) for a, b in joined if a in among and b in among}
    group_of = {w: {w} for w in among}
    for a, b in links:
        if group_of[a] is not group_of[b]:
            merged = group_of[a] | group_of[b]
            for w in merged:
                group_of[w] = merged
    groups: list[list[str]] = []
    for w in among:
        group = sorted(group_of[w])
        if group not in groups:
            groups.append(group)
    return groups


@given(listings, st.data())
def test_one_list_each_groups_the_workspaces_asked_about_by_what_they_share_among_themselves(
        entry_ids: dict[str, list[str]], data: st.DataObject) -> None:
    among = data.draw(st.lists(st.sampled_from(sorted(entry_ids)), unique=True) if entry_ids else st.just([]))
    joined = data.draw(st.lists(st.tuples(st.sampled_from([f"ws_{i}" for i in range(8)]),
                                          st.sampled_from([f"ws_{i}" for i in range(8)])), max_size=3))
    workspaces = [LiveWorkspace(id=w, name=w, users={}, domains={}) for w in among]
    grouped = one_list_each(workspaces, shared_entries(entry_ids), joined)
    assert grouped == _grouped_by_definition(entry_ids, among, joined)


def test_two_workspaces_sharing_or_joined_only_through_one_not_asked_about_hold_two_lists() -> None:
    sharing = shared_entries({"ws_a": ["e1"], "ws_hub": ["e1", "e2"], "ws_b": ["e2"]})
    workspaces = [LiveWorkspace(id=w, name=w, users={}, domains={}) for w in ("ws_b", "ws_a")]
    assert one_list_each(workspaces, sharing) == [["ws_b"], ["ws_a"]]
    assert one_list_each(workspaces, {}, [("ws_a", "ws_hub"), ("ws_hub", "ws_b")]) == [["ws_b"], ["ws_a"]]
    assert one_list_each(workspaces, {}, [("ws_a", "ws_b")]) == [["ws_a", "ws_b"]]


# A listing's workspaces, each entry (id, user or domain): ids drawn from few, some empty (an entry the service
# answered without one), so ids repeat across workspaces, within one, and not at all.
entries = st.lists(st.tuples(st.sampled_from(["", *(f"e{i}" for i in range(10))]), st.booleans()), max_size=5)


@given(st.dictionaries(st.sampled_from([f"ws_{i}" for i in range(6)]), entries, max_size=6))
def test_a_listings_sharing_is_shared_entries_of_its_workspaces_entry_ids(
        listed: dict[str, list[tuple[str, bool]]]) -> None:
    workspaces = {}
    for wid, found in listed.items():
        users = {f"u{n}@x.com": LiveEntry(eid, f"u{n}@x.com", "viewer") for n, (eid, user) in enumerate(found) if user}
        domains = {f"d{n}.com": LiveEntry(eid, f"d{n}.com", "viewer") for n, (eid, user) in enumerate(found)
                   if not user}
        workspaces[wid] = LiveWorkspace(id=wid, name=wid, users=users, domains=domains)
    live = Live(workspaces=workspaces)
    assert live.sharing == shared_entries({w.id: w.entry_ids() for w in workspaces.values()})


def test_a_listing_whose_only_repeated_id_is_on_one_workspace_shares_nothing() -> None:
    twice = LiveWorkspace(id="ws_1", name="one", users={"a@x.com": LiveEntry("e1", "a@x.com", "viewer")},
                          domains={"x.com": LiveEntry("e1", "x.com", "viewer")})
    other = LiveWorkspace(id="ws_2", name="two", users={"b@x.com": LiveEntry("e2", "b@x.com", "viewer")})
    assert Live(workspaces={"ws_1": twice, "ws_2": other}).sharing == {}


def test_two_workspaces_showing_one_entry_id_share_it_and_entries_without_an_id_share_nothing() -> None:
    first = LiveWorkspace(id="ws_1", name="one", users={"a@x.com": LiveEntry("e1", "a@x.com", "viewer"),
                                                          "n@x.com": LiveEntry("", "n@x.com", "viewer")})
    second = LiveWorkspace(id="ws_2", name="two", domains={"x.com": LiveEntry("e1", "x.com", "viewer")})
    third = LiveWorkspace(id="ws_3", name="three", users={"n@x.com": LiveEntry("", "n@x.com", "viewer")})
    live = Live(workspaces={w.id: w for w in (first, second, third)})
    assert live.sharing == {"ws_1": {"ws_2"}, "ws_2": {"ws_1"}}
