"""``python -m bench``: every figure of the tool's cost, against its floors, in one run.

For each company size N (default 1,000, 10,000 and 50,000 workspaces, each
with 25 access entries, one list in ten drifted; see ``bench/scenario.py``)
on the in-process emulator: validate and plan time and peak memory, the
parsing floors and the plan's ratio to them, plan calls against their bound
and against a per-resource refresh, and the apply of the drifted lists on
the virtual clock (``bench/sizes.py`` says how each is measured). Then the
start-up of whole processes (``bench/startup.py``). Run from the project
root:

    .venv/bin/python -m bench                       # 1,000, 10,000, 50,000
    .venv/bin/python -m bench --sizes 1000,10000 --repeat 3
    .venv/bin/python -m bench --sizes 200 --no-startup
    .venv/bin/python -m bench --sizes '' --startup-runs 20   # start-up alone

The output is markdown, ready for bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable, Sequence

from bench.sizes import SizeResult, least_seconds, measure_size
from bench.startup import StartupResult, measure_startup

DEFAULT_SIZES = (1_000, 10_000, 50_000)
MIB = 2**20

Row = tuple[str, Callable[[SizeResult], str]]


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


def _ratio(r: SizeResult, cpu: float) -> str:
    return f"{cpu / r.floors:.2f}×" if r.floors else "–"


def _replan(r: SizeResult) -> str:
    if r.replan is None:
        return "not run"
    return f"{r.replan_changes} changes, {_s(r.replan.wall)} / {_s(r.replan.cpu)}"


# (label, figure) for each row of the size table; the labels are what
# tests/bench/test_harness.py looks for.
SIZE_ROWS: tuple[Row, ...] = (
    ("access entries (lists drifted)", lambda r: f"{r.entries:,} ({r.drifted:,})"),
    ("**validate** wall / CPU", lambda r: f"{_s(r.validate.wall)} / {_s(r.validate.cpu)}"),
    ("**plan** wall / CPU (load + read + plan)", lambda r: f"{_s(r.plan.wall)} / {_s(r.plan.cpu)}"),
    ("of which load_desired / plan_with_client, CPU",
     lambda r: f"{_s(r.plan.cpu - r.plan_read.cpu)} / {_s(r.plan_read.cpu)}"),
    ("of plan_with_client: the emulator / the tool, CPU",
     lambda r: f"{_s(r.plan_emulator.cpu)} / {_s(r.plan_read.cpu - r.plan_emulator.cpu)}"),
    ("plan peak memory (tracemalloc)", lambda r: f"{r.plan_peak / MIB:.0f} MiB"),
    ("process max RSS so far (emulator included)", lambda r: f"{r.max_rss / MIB:.0f} MiB"),
    ("floor: YAML parse alone (CSafeLoader), CPU", lambda r: _s(r.yaml_floor.cpu)),
    ("floor: YAML parse alone, peak memory (tracemalloc)", lambda r: f"{r.yaml_floor_peak / MIB:.0f} MiB"),
    ("floor: JSON decode of the pages alone, CPU", lambda r: f"{_s(r.json_floor.cpu)} ({r.page_bytes / MIB:.1f} MiB)"),
    ("plan / floors, CPU (tool only: emulator excluded)", lambda r: _ratio(r, r.tool_cpu)),
    ("plan / floors, CPU (emulator included)", lambda r: _ratio(r, r.plan.cpu)),
    ("**plan calls**", lambda r: f"{r.plan_calls:,}"),
    ("bound ceil(N/100)+2", lambda r: f"{r.bound:,}"),
    ("per-resource refresh N+ceil(N/100)", lambda r: f"{r.per_resource_calls:,}"),
    ("time at 120/min: plan / per-resource",
     lambda r: f"{least_seconds(r.plan_calls):.0f} s / {least_seconds(r.per_resource_calls):,.0f} s"),
    ("**apply** changes / calls", lambda r: f"{r.changes:,} / {r.apply_calls:,}"),
    ("apply 429s", lambda r: str(r.apply_429s)),
    ("apply virtual time / least time", lambda r: f"{r.apply_virtual:,.0f} s / {r.apply_least:,.0f} s"
                                                  f" (plan says {r.apply_least_plan:,.0f} s)"),
    ("apply share of the rate-limit bound",
     lambda r: f"{100 * r.apply_least / r.apply_virtual:.1f}%" if r.apply_virtual else "100% (no wait needed)"),
    ("apply wall (of which the emulator, CPU)", lambda r: f"{_s(r.apply_wall)} ({_s(r.apply_emulator.cpu)})"),
    ("one whole state write, every list recorded (file size): once per apply",
     lambda r: f"{1000 * r.state_write.wall:.0f} ms ({r.state_bytes / MIB:.1f} MiB)"),
    ("one apply change's state I/O: a journal append + fsync",
     lambda r: f"{1000 * r.journal_append.wall:.1f} ms"),
    ("re-plan from the applied state: changes, wall / CPU", _replan),
)


def size_table(results: Sequence[SizeResult]) -> list[str]:
    """One column per N, one row per figure."""
    lines = [
        "| workspaces | " + " | ".join(f"{r.n:,}" for r in results) + " |",
        "|---|" + "---:|" * len(results),
    ]
    lines += [f"| {label} | " + " | ".join(figure(r) for r in results) + " |" for label, figure in SIZE_ROWS]
    return lines


def startup_table(results: Sequence[StartupResult]) -> list[str]:
    bare = results[0].best
    lines = ["| process | best | median | best − python -c pass | exit |", "|---|---:|---:|---:|---:|"]
    lines += [f"| `{r.label}` | {r.best:.3f} s | {r.median:.3f} s | {r.best - bare:+.3f} s | {r.exit_code} |"
              for r in results]
    return lines


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()} "
            f"({platform.python_implementation()}), {platform.system()}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="comma-separated workspace counts (default %(default)s); "
                             "--sizes '' measures the start-up alone")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each timed step; the fastest counts (default %(default)s)")
    parser.add_argument("--startup-runs", type=int, default=10,
                        help="runs of each start-up process; the fastest counts (default %(default)s)")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up figures")
    parser.add_argument("--no-replan", action="store_true", help="skip the plan after the apply")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[SizeResult]:
    """Measure and print; returns the per-size results (for tests)."""
    args = parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    print(f"Machine: {machine()}.")
    print(f"Command: python -m bench {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip() + "\n")
    results = []
    for n in sizes:
        results.append(measure_size(n, repeat=args.repeat, replan=not args.no_replan))
        print(f"<!-- N={n:,} measured; set-up (scenario + emulator) {results[-1].setup_wall:.1f} s -->",
              flush=True)
    if results:
        print()
        print("\n".join(size_table(results)))
    if not args.no_startup:
        print()
        print("\n".join(startup_table(measure_startup(args.startup_runs))))
    return results


if __name__ == "__main__":
    main()
