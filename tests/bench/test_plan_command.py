"""``bench.plan_command`` and ``bench.plan_floor`` keep working: their company, the reading of the plan,
the child processes.

Counts only; the times and sizes it prints are never asserted.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import sys
from pathlib import Path
from types import FrameType

import pytest

from bench import plan_floor
from bench.governance import TEAMS
from bench.command_cpu import CommandRun
from bench.plan_command import (CHECKOUT, MISSING_TEAM, THIS, WITH, WITHOUT, Code, PlanFailed, Planned, VariantResult,
                                changed_seed, counted, expected, export_revision, instructions_in, main, measure,
                                planned, run_child, steady_seed, turns)
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


def test_the_floor_program_runs_in_the_checkout_wherever_the_benchmark_is_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its child is ``python -m bench.plan_floor_child``: found only from the checkout's root, as the plan's is."""
    monkeypatch.chdir(tmp_path)
    [(run, found)], _ = plan_floor.measure(5, repeat=1)
    assert (run.exit_code, found["listed"], found["differ"]) == (0, 5, 0)


def test_a_revision_is_exported_with_its_package(tmp_path: Path) -> None:
    code = export_revision("HEAD", tmp_path)
    assert (code.label, (code.root / "reconciler" / "__init__.py").is_file()) == ("HEAD", True)


def test_a_revision_git_does_not_know_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(PlanFailed, match="git archive no-such-revision failed"):
        export_revision("no-such-revision", tmp_path)


def _result(code: str, variant: str, *cpus: float) -> VariantResult:
    return VariantResult(10, variant, tuple(CommandRun(cpu, 0.0, 1, 0, 0) for cpu in cpus), 1.0, 1, 1,
                         Planned(0, 0, 0, 0), code)


def test_each_turns_ratio_is_the_second_codes_cpu_over_the_firsts_in_that_turn() -> None:
    results = [_result("main~1", WITHOUT, 4.0, 5.0, 4.0), _result(THIS, WITHOUT, 3.0, 4.5, 4.4),
               _result("main~1", WITH, 8.0), _result(THIS, WITH, 6.0)]
    assert turns(results) == [
        "10, without changes: this checkout / main~1 CPU in each turn 0.750, 0.900, 1.100; median 0.900",
        "10, with changes: this checkout / main~1 CPU in each turn 0.750; median 0.750"]


def test_one_code_has_no_turns_to_compare() -> None:
    assert turns([_result(THIS, WITHOUT, 4.0), _result(THIS, WITH, 6.0)]) == []


def test_the_benchmark_plans_from_each_code_in_turns_each_from_its_own_tree(tmp_path: Path) -> None:
    exported = export_revision("HEAD", tmp_path)
    # The exported tree's package says each time it is imported, so the test sees which tree each plan ran.
    with (exported.root / "reconciler" / "__init__.py").open("a", encoding="utf-8") as package:
        package.write("\nwith open(__file__ + '.ran', 'a') as _ran:\n    _ran.write('x')\n")
    results = measure(5, repeat=1, codes=[exported, Code(THIS, CHECKOUT)])
    assert [(r.variant, r.code, r.planned, len(r.runs)) for r in results] == [
        (WITHOUT, "HEAD", Planned(0, 0, 0, 0), 1), (WITHOUT, THIS, Planned(0, 0, 0, 0), 1),
        (WITH, "HEAD", Planned(5, 10, 0, 0), 1), (WITH, THIS, Planned(5, 10, 0, 0), 1)]
    assert (exported.root / "reconciler" / "__init__.py.ran").read_text() == "xx"  # one plan of each variant


def test_against_a_revision_prints_each_turns_ratio_of_this_checkout_over_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    results = main(["--sizes", "5", "--repeat", "1", "--against", "HEAD"])
    assert [r.code for r in results] == ["HEAD", THIS, "HEAD", THIS]
    out = capsys.readouterr().out
    assert re.search(r"^5, without changes: this checkout / HEAD CPU in each turn \d+\.\d{3}; median", out, re.M), out
    assert re.search(r"^5, with changes: this checkout / HEAD CPU in each turn \d+\.\d{3}; median", out, re.M), out


def test_counted_turns_compare_instructions_not_cpu() -> None:
    slow, fast = _result("main~1", WITH, 8.0), _result(THIS, WITH, 1.0)
    counted = [dataclasses.replace(slow, instructions=(200,)), dataclasses.replace(fast, instructions=(150,))]
    assert turns(counted) == ["10, with changes: this checkout / main~1 instructions in each turn 0.750; median 0.750"]


def test_a_cachegrind_file_without_its_summary_line_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "plan.cg").write_text("desc: --cache-sim=no\ncmd: python\nevents: Ir\n", encoding="utf-8")
    with pytest.raises(PlanFailed, match="plan.cg: no 'summary:' line"):
        instructions_in(tmp_path / "plan.cg")
    assert instructions_in(_cg(tmp_path, 1234)) == 1234


def _cg(root: Path, count: int) -> Path:
    (root / "done.cg").write_text(f"desc: --cache-sim=no\nevents: Ir\nsummary: {count}\n", encoding="utf-8")
    return root / "done.cg"


def test_instructions_are_counted_for_each_plan_and_for_the_event_parse_without_its_childs_start() -> None:
    """One test, as each run under cachegrind takes seconds (an interpreter's start, counted instruction by
    instruction): the same run counts the same within 0.1% (bench/README), not asserted here."""
    without, with_changes = measure(5, repeat=1, instructions=True)
    assert (without.planned, with_changes.planned) == (Planned(0, 0, 0, 0), Planned(5, 10, 0, 0))
    assert 10**8 < without.instructions[0] < with_changes.instructions[0]  # the changes are work too
    # The manifest of 5 workspaces is some 150 lines: its parse is a few million instructions, where the
    # child's start (an interpreter, PyYAML imported, the file read), subtracted, is some hundred million.
    assert 0 < without.floor_instructions < 20_000_000


def test_counting_without_valgrind_is_refused_saying_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind on it
    with pytest.raises(PlanFailed, match=r"valgrind, which is not installed: \.ci/ensure-valgrind installs it"):
        counted(["python", "-c", "pass"], tmp_path / "out.cg")
