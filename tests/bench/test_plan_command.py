"""``bench.plan_command`` and ``bench.plan_floor`` keep working: their company, the reading of the plan,
the child processes.

Counts only; the times and sizes it prints are never asserted.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType

import pytest

from bench import plan_floor
from bench.governance import TEAMS
from bench.plan_command import (MISSING_TEAM, WITH, WITHOUT, Planned, changed_seed, expected, measure, planned,
                                run_child, steady_seed)
from bench.scenario import _users


def _users_of(seed: dict[str, object], i: int) -> list[str]:
    workspaces = seed["companies"]["acme"]["workspaces"]  # type: ignore[index]
    return [user["email"] for user in workspaces[i]["users"]]


def test_the_steady_service_holds_every_list_as_the_manifest_writes_it_drift_undone() -> None:
    seed = steady_seed(21)
    for i in (0, 10, 20):  # the scenario drifts these three
        emails = _users_of(seed, i)
        assert emails[:len(_users(i))] == [email for email, _ in _users(i)]
        assert not any(email.endswith("@elsewhere.io") for email in emails)


def test_the_changed_service_lacks_only_the_rules_team_in_every_workspace() -> None:
    steady = steady_seed(3)
    changed = changed_seed(steady)
    for i in range(3):
        missing = [email for email in _users_of(steady, i) if email not in _users_of(changed, i)]
        assert missing == TEAMS[MISSING_TEAM]
    assert _users_of(steady, 0)[-1] in TEAMS[MISSING_TEAM]  # the steady seed was not changed in place


def test_a_plan_text_is_read_as_its_change_blocks_and_its_summary() -> None:
    text = ("reconciler will make these changes:\n\n"
            "  # workspace.c-1: workspace ws_000001 \"Client 1\" (m.yaml:36)\n"
            "  ~ access {\n      + user   sec1@acme.com  commenter  (via rule baseline (team security))\n    }\n\n"
            "  # workspace.c-2: workspace ws_000002 \"Client 2\" (m.yaml:67)\n"
            "  ~ access {\n      - user   x@y.io  viewer   REMOVED: loses access\n    }\n\n"
            "Plan: 1 to add, 0 to change, 1 to remove.\n")
    assert planned(text) == Planned(changes=2, add=1, change=0, remove=1)
    assert planned("No changes. The service matches the manifests (3 access lists checked).\n") == Planned(0, 0, 0, 0)
    assert expected(WITH, 7) == Planned(changes=7, add=14, change=0, remove=0)
    assert expected(WITHOUT, 7) == Planned(0, 0, 0, 0)


def test_a_child_is_measured_alone_and_reports_its_exit_code(tmp_path: Path) -> None:
    burn = "b = bytearray(64 * 2**20); sum(range(3 * 10**6)); raise SystemExit(3)"
    run = run_child([sys.executable, "-c", burn], dict(os.environ), tmp_path / "out", tmp_path / "err")
    assert run.exit_code == 3
    assert run.peak_rss >= 64 * 2**20 and run.cpu > 0


class _Interrupted(Exception):
    pass


def test_a_child_is_killed_when_the_benchmark_is_interrupted_while_it_runs(tmp_path: Path) -> None:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise _Interrupted

    sleeper = "import os, time; print(os.getpid(), flush=True); time.sleep(60)"
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(_Interrupted):
            run_child([sys.executable, "-c", sleeper], dict(os.environ), tmp_path / "out", tmp_path / "err")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pid = int((tmp_path / "out").read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)


def test_the_benchmark_plans_both_variants_as_processes_against_a_served_emulator() -> None:
    without, with_changes = measure(5, repeat=1)
    assert (without.variant, without.planned) == (WITHOUT, Planned(0, 0, 0, 0))
    assert (with_changes.variant, with_changes.planned) == (WITH, Planned(5, 10, 0, 0))
    for result in (without, with_changes):
        (run,) = result.runs
        assert run.exit_code == 0 and run.peak_rss > 0 and result.events > 0


def test_the_floor_program_reads_every_workspace_of_the_steady_company_and_finds_none_differing() -> None:
    runs, floor = plan_floor.measure(101, repeat=1)  # two pages of the listing
    [(run, found)] = runs
    assert (run.exit_code, found["workspaces"], found["listed"], found["differ"]) == (0, 101, 101, 0)
    assert len(found["steps"]) == len(plan_floor.STEPS)
    assert floor > 0


def test_the_floor_program_compares_each_list_so_a_service_lacking_the_rules_team_differs_everywhere() -> None:
    [(_, found)], _ = plan_floor.measure(5, repeat=1, seed_of=changed_seed)
    assert (found["listed"], found["differ"]) == (5, 5)
