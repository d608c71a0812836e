"""Planning 1,000 groups of 3 workspaces costs one paged listing, no per-group reads.

Membership and section values cannot be read back from the service, so
they cost no reads; only the listing (page size 100) is read. The scenario
is the benchmark's (``bench/groups_scale.py``): each group a homepage and
two existing workspaces to connect, one section to hide, and a user added
to every tenth group's list.

Applying 1,000 groups takes about 3,100 calls and ten seconds here, so the
apply and the plan after it are tested on 100 groups; the benchmark applies
and plans again at 1,000 (bench/README.md).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.groups_scale import connect, scenario
from reconciler.apply import ApplyResult, apply_plan
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.plan.model import ConnectChange
from reconciler.state import State

GROUPS = 1000
WORKSPACES = 3 * GROUPS
BOUND = math.ceil(WORKSPACES / 100) + 2
APPLIED_GROUPS = 100
APPLIED_WORKSPACES = 3 * APPLIED_GROUPS
APPLIED_BOUND = math.ceil(APPLIED_WORKSPACES / 100) + 2


@dataclass(frozen=True)
class Planned:
    emulator: Emulator
    plan: Plan
    requests: Counter[tuple[str, str]]


@dataclass(frozen=True)
class Replanned:
    applied: ApplyResult
    plan: Plan
    requests: Counter[tuple[str, str]]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return scenario(tmp_path_factory.mktemp("groups"), GROUPS)


@pytest.fixture(scope="module")
def planned(files: tuple[Path, Path]) -> Planned:
    seed, manifest = files
    emulator, client, _ = connect(seed)
    plan = plan_with_client(client, load_desired(manifest), State())
    return Planned(emulator, plan, Counter((r.method, r.path) for r in emulator.requests))


@pytest.fixture(scope="module")
def replanned(tmp_path_factory: pytest.TempPathFactory) -> Replanned:
    """Apply the whole plan for 100 groups (313 calls), then plan again from the state the apply returned."""
    root = tmp_path_factory.mktemp("applied")
    seed, manifest = scenario(root, APPLIED_GROUPS)
    emulator, client, _ = connect(seed)
    desired = load_desired(manifest)
    applied = apply_plan(plan_with_client(client, desired, State()), client=client, state=State(),
                         state_path=root / "s.json")
    before = len(emulator.requests)
    plan = plan_with_client(client, desired, applied.state)
    return Replanned(applied, plan, Counter((r.method, r.path) for r in emulator.requests[before:]))


def test_plan_reads_only_the_paged_workspace_listing(planned: Planned) -> None:
    assert set(planned.requests) == {("GET", "/v1/workspaces")}
    assert planned.requests[("GET", "/v1/workspaces")] <= BOUND
    assert planned.requests[("GET", "/v1/workspaces")] == math.ceil(WORKSPACES / 100)


def test_plan_connects_both_members_of_every_group(planned: Planned) -> None:
    connects = [c for c in planned.plan.changes if isinstance(c, ConnectChange)]
    assert len(connects) == 2 * GROUPS
    assert planned.plan.summary.workspaces_connected == 2 * GROUPS


def test_apply_makes_every_change_of_the_plan(replanned: Replanned) -> None:
    # 200 connects and what each join does to the joining workspace's own list (200 access changes
    # without a call), 100 sections, 10 lists gaining a user.
    assert replanned.applied.changed == 2 * (2 * APPLIED_GROUPS) + APPLIED_GROUPS + APPLIED_GROUPS // 10


def test_plan_after_apply_has_no_changes(replanned: Replanned) -> None:
    assert replanned.plan.changes == ()
    assert not replanned.plan.has_changes


def test_plan_after_apply_reads_only_the_paged_listing(replanned: Replanned) -> None:
    assert set(replanned.requests) == {("GET", "/v1/workspaces")}
    assert replanned.requests[("GET", "/v1/workspaces")] <= APPLIED_BOUND
    assert replanned.requests[("GET", "/v1/workspaces")] == math.ceil(APPLIED_WORKSPACES / 100)
