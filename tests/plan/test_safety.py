from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import PlanError
from reconciler.manifest import load_desired
from reconciler.plan import check_max_removals, make_plan
from reconciler.state import State
from tests.conftest import live_of
from tests.plan.test_planner import GROUP, HOME_LIVE


def test_max_removals_refuses_a_plan_that_removes_more(write_manifest: Callable[..., Path]) -> None:
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(HOME_LIVE), State())
    with pytest.raises(PlanError) as err:
        check_max_removals(plan, 0)
    assert "removes 1 access entries (group.onboarding: user old@agency.io)" in str(err.value)


def test_max_removals_allows_a_plan_within_the_limit(write_manifest: Callable[..., Path]) -> None:
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(HOME_LIVE), State())
    check_max_removals(plan, 1)  # raises if refused
    assert len(plan.removals) == 1
