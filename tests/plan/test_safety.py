from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import PlanError
from reconciler.manifest import load_desired
from reconciler.plan import check_max_removals, make_plan
from reconciler.plan.differences import removals
from reconciler.state import State
from tests.conftest import live_of, live_workspace
from tests.plan.test_planner import GROUP, HOME_LIVE


def test_max_removals_refuses_a_plan_that_removes_more(write_manifest: Callable[..., Path]) -> None:
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(HOME_LIVE), State())
    with pytest.raises(PlanError) as err:
        check_max_removals(plan, 0)
    assert ('removes 1 access entry, each a person or domain losing all access to one workspace (ws_home "Home": '
            "user old@agency.io (group.onboarding))") in str(err.value)


def test_max_removals_allows_a_plan_within_the_limit(write_manifest: Callable[..., Path]) -> None:
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(HOME_LIVE), State())
    check_max_removals(plan, 1)  # raises if refused
    assert len(removals(plan)) == 1


def _plan_removing(count: int, write_manifest: Callable[..., Path]):  # type: ignore[no-untyped-def]
    """A plan that removes ``count`` users (u00@old.io, u01@old.io, ...) from the group's homepage."""
    gone = {f"u{i:02}@old.io": "editor" for i in range(count)}
    live = live_workspace("ws_home", users={"jane@acme.com": "owner", "raj@customer.com": "collaborator",
                                            "priya@customer.com": "viewer", **gone},
                          domains={"customer.com": "viewer"}, name="Home")
    return make_plan(load_desired(write_manifest(GROUP)), live_of(live), State())


def test_a_refusal_lists_the_first_ten_removals_and_counts_the_rest(write_manifest: Callable[..., Path]) -> None:
    plan = _plan_removing(12, write_manifest)
    with pytest.raises(PlanError) as err:
        check_max_removals(plan, 11)
    listed = ", ".join(f'ws_home "Home": user u{i:02}@old.io (group.onboarding)' for i in range(10))
    assert str(err.value) == ("The plan removes 12 access entries, each a person or domain losing all access to one "
                              f"workspace ({listed} and 2 more), more than --max-removals 11 allows. Nothing was "
                              "changed. If these removals are intended, raise --max-removals.")
    assert err.value.plan is plan


def test_a_refusal_of_exactly_ten_removals_lists_them_all_and_no_more(write_manifest: Callable[..., Path]) -> None:
    plan = _plan_removing(10, write_manifest)
    with pytest.raises(PlanError) as err:
        check_max_removals(plan, 9)
    listed = ", ".join(f'ws_home "Home": user u{i:02}@old.io (group.onboarding)' for i in range(10))
    assert f"({listed}), more than --max-removals 9 allows." in str(err.value)


def test_as_many_removals_as_allowed_pass_and_none_allowed_means_no_limit(write_manifest: Callable[..., Path]
                                                                          ) -> None:
    plan = _plan_removing(3, write_manifest)
    check_max_removals(plan, 3)
    check_max_removals(plan, None)
    with pytest.raises(PlanError):
        check_max_removals(plan, 2)
