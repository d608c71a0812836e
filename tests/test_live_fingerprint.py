"""The fingerprint that binds a saved plan to the lists it was made from (``Live.fingerprint``): each
workspace's part is written straight from its entries, and must stay exactly the documented
``json.dumps(access_fingerprint(), sort_keys=True)``, or every plan saved before would no longer match."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from reconciler.live import Live, LiveEntry, LiveWorkspace
from reconciler.vocabulary import ROLES

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)  # quotes, controls, non-ASCII
_ENTRIES = st.dictionaries(_TEXT, st.sampled_from([*ROLES, None]), max_size=4)


def _workspace(workspace_id: str, users: dict[str, str | None], domains: dict[str, str | None]) -> LiveWorkspace:
    return LiveWorkspace(id=workspace_id, name=None,
                         users={k: LiveEntry(f"u{i}", k, r) for i, (k, r) in enumerate(users.items())},  # type: ignore[arg-type]
                         domains={k: LiveEntry(f"d{i}", k, r) for i, (k, r) in enumerate(domains.items())})  # type: ignore[arg-type]


@given(_ENTRIES, _ENTRIES)
def test_a_workspaces_fingerprint_is_written_as_json_dumps_writes_it(users: dict[str, str | None],
                                                                      domains: dict[str, str | None]) -> None:
    workspace = _workspace("ws_1", users, domains)
    assert workspace.access_fingerprint_json() == json.dumps(workspace.access_fingerprint(), sort_keys=True)


@given(st.dictionaries(_TEXT, st.tuples(_ENTRIES, _ENTRIES), max_size=3), st.lists(_TEXT, max_size=4))
def test_the_listings_fingerprint_is_the_sha256_of_the_documented_json(
        workspaces: dict[str, tuple[dict[str, str | None], dict[str, str | None]]], asked: list[str]) -> None:
    live = Live(workspaces={w: _workspace(w, users, domains) for w, (users, domains) in workspaces.items()})
    ids = [*asked, *workspaces]
    documented = json.dumps({w: live.workspaces[w].access_fingerprint() if w in live.workspaces else None
                             for w in ids}, sort_keys=True)
    assert live.fingerprint(ids) == hashlib.sha256(documented.encode()).hexdigest()
