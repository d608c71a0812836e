"""What each workspace gains, loses or changes, read from a plan's effects (reconciler.plan.differences): for any
view before and after, whether or not they share their entries, every key whose role differs, and only those."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconciler.plan.differences import differences, removals
from reconciler.plan.model import AccessViews, Effect, Plan
from reconciler.vocabulary import ROLES

lists = st.dictionaries(st.sampled_from([f"u{i}@acme.com" for i in range(10)]), st.sampled_from(ROLES), max_size=10)
domains = st.dictionaries(st.sampled_from(["acme.com", "ext.com", "x.io"]), st.sampled_from(ROLES), max_size=3)


@given(lists, lists, domains, domains, st.booleans())
def test_every_key_whose_role_differs_and_only_those(users_before: dict[str, str], users_after: dict[str, str],
                                                     domains_before: dict[str, str], domains_after: dict[str, str],
                                                     shared: bool) -> None:
    views = AccessViews()
    before = views.of(users_before, domains_before)  # type: ignore[arg-type]
    after = (views if shared else AccessViews()).of(users_after, domains_after)  # type: ignore[arg-type]
    plan = Plan(effects=(Effect(workspace="ws_1", name="One", creates=None, before=before, after=after,
                                because=("workspace.one",)),))
    expected = [(kind, key, old.get(key), new.get(key))
                for kind, old, new in (("user", users_before, users_after), ("domain", domains_before, domains_after))
                for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)]
    found = differences(plan)
    assert [(d.kind, d.key, d.before, d.after) for d in found] == expected
    assert {(d.workspace, d.because) for d in found} <= {('ws_1 "One"', ("workspace.one",))}
    assert [(d.kind, d.key) for d in removals(plan)] == [(k, key) for k, key, _, after in expected if after is None]
