"""``python -m bench`` keeps working: one small run, counts only (no timing).

The harness measures times and memory for 1,000 to 50,000 workspaces; here
it runs for 200 so that a broken scenario, a changed API or a renamed row is
caught by ``make test``. Times are printed but never asserted.
"""

from __future__ import annotations

import contextlib
import io
import math

import pytest

from bench.__main__ import SIZE_ROWS, main, startup_table
from bench.scenario import DRIFT_EVERY, ENTRIES_PER_LIST
from bench.sizes import SizeResult
from bench.startup import measure_startup

N = 200


@pytest.fixture(scope="module")
def run() -> tuple[SizeResult, str]:
    """The harness's main function for N = 200, and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = main(["--sizes", str(N), "--no-startup"])
    return results[0], out.getvalue()


def test_plan_reads_one_paged_listing_within_the_bound(run: tuple[SizeResult, str]) -> None:
    result, _ = run
    assert result.plan_calls == math.ceil(N / 100)
    assert result.plan_calls <= result.bound == math.ceil(N / 100) + 2
    assert result.per_resource_calls == N + math.ceil(N / 100)


def test_apply_makes_every_drifted_list_right_without_a_429(run: tuple[SizeResult, str]) -> None:
    result, _ = run
    assert result.drifted == N // DRIFT_EVERY
    assert result.changes == result.drifted
    assert result.apply_429s == 0
    assert result.apply_calls >= result.changes
    assert result.replan_changes == 0
    assert result.entries == N * ENTRIES_PER_LIST


def test_the_table_has_every_row_and_one_column_per_size(run: tuple[SizeResult, str]) -> None:
    _, printed = run
    lines = printed.splitlines()
    assert f"| workspaces | {N} |" in lines
    for label, _ in SIZE_ROWS:
        row = next((line for line in lines if line.startswith(f"| {label} |")), None)
        assert row is not None, label
        assert row.count("|") == 3, row  # label and one figure
    for floor in ("floor: YAML parse alone (CSafeLoader), CPU", "floor: JSON decode of the pages alone, CPU"):
        assert any(line.startswith(f"| {floor} |") for line in lines)


def test_startup_rows_name_each_process_and_every_process_succeeds() -> None:
    results = measure_startup(runs=1)
    assert [r.label for r in results] == [
        "python -c pass", "floor: click, PyYAML and pydantic imported", "reconciler --help",
        "reconciler validate (5-line manifest)"]
    assert all(r.exit_code == 0 for r in results)
    table = startup_table(results)
    assert len(table) == 2 + len(results)


def test_the_load_floor_reads_every_event_of_the_manifest_in_python_and_in_c() -> None:
    from bench.load_floor import event_parse, raw_parse
    from bench.scenario import build

    text = build(4).manifest
    # Per workspace: 106 scalars, 29 lists and mappings (two events each); then the root
    # mapping, "version", 1, "workspaces" and its mapping; stream and document start and end.
    expected = 4 * (106 + 2 * 29) + 2 + 3 + 2 + 4
    assert event_parse(text) == raw_parse(text) == expected


def test_the_command_benchmark_runs_report_and_plan_as_processes_against_a_served_emulator() -> None:
    from bench.command_cpu import measure

    (report,), (plan,) = measure(20, repeat=1)
    # Each command ran and exited 0 (measure raises otherwise), and its own process was measured.
    assert (report.exit_code, plan.exit_code) == (0, 0) and report.peak_rss > 0 and plan.minor_faults > 0


def test_the_command_benchmark_compares_each_report_with_the_plan_of_its_own_turn() -> None:
    from bench.command_cpu import CommandRun, least, turn_ratios

    def run(cpu: float) -> CommandRun:
        return CommandRun(user=cpu - 1, system=1.0, peak_rss=1, minor_faults=1, exit_code=0)

    reports, plans = [run(9.0), run(12.0)], [run(10.0), run(8.0)]
    assert turn_ratios(reports, plans) == [0.9, 1.5]
    assert least(reports).cpu == 9.0 and least(plans).cpu == 8.0


def test_the_effects_benchmark_names_its_size_and_its_three_cases(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.effects import main as effects_main

    effects_main(["30"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "N = 30 workspaces x 25 entries"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "no change altering a list", "one POST", "a POST on N/10 workspaces"]


def test_the_effects_benchmark_refuses_a_size_that_is_not_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.effects import main as effects_main

    with pytest.raises(SystemExit) as exit_:
        effects_main(["thirty"])
    assert exit_.value.code == 2
    assert "argument n: invalid int value: 'thirty'" in capsys.readouterr().err
