"""Benchmark: ``reconciler report`` of N workspaces, and its page in headless Chromium.

The company is the benchmark's (``bench/scenario.py``: 25 access entries a
workspace, 20 users and 5 domains, every list in a manifest) on the
in-process emulator.  For each N: the report's whole path as the command
runs it (``load_desired``, the one listing, each workspace's entries
attributed and made report rows (``report_of_parts``), writing the three files), wall and CPU, with the
emulator's share measured inside its transport; its peak memory under
``tracemalloc`` in a run of its own; the listing calls against
ceil(N/100); the files' sizes; and the page's first rows in Chromium (the
page's own ``performance.now()`` when its first rows are in the DOM, read
from the dumped DOM; the best of ``--repeat`` launches).  With ``--repeat``,
the report and the plan run in turns and the best CPU of each is kept.  Run:

    .venv/bin/python -m bench.report_scale 1000 10000
"""

from __future__ import annotations

import argparse
import datetime
import math
import re
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.chromium import open_page
from bench.scenario import ENTRIES_PER_LIST, build
from bench.service import make_emulator, open_session
from bench.sizes import Timing, best_of
from reconciler.commands.plan import plan_with_client
from reconciler.company.build import attributed
from reconciler.company.read import ATTRIBUTION_PROPERTIES, read_live
from reconciler.manifest import load_desired
from reconciler.report.files import write_report
from reconciler.report.model import report_of_parts
from reconciler.state import State

MIB = 2**20
MOMENT = datetime.datetime(2027, 1, 15, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class ReportResult:
    n: int
    rows: int
    calls: int
    total: Timing
    emulator_cpu: float
    plan: Timing  # load_desired + plan_with_client on the same company: what the report is held to
    peak: int
    sizes: dict[str, int]
    first_rows_ms: int


def measure(n: int, *, repeat: int = 1) -> ReportResult:
    scenario = build(n)
    emulator, clock = make_emulator(scenario.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "manifest.yaml").write_text(scenario.manifest, encoding="utf-8")
        del scenario
        out = root / "out"
        sessions = []

        def run() -> int:
            session = open_session(emulator, clock)
            sessions.append(session)
            desired = load_desired(root / "manifest.yaml", lint_notes=False)  # as the command: it shows no lint
            live = read_live(session.client, ATTRIBUTION_PROPERTIES)  # as the command: no creation fields
            # As reconciler.commands.report does: each workspace's rows go into the report as they
            # are attributed, and the listing is let go before the files are written.
            made = report_of_parts(attributed(desired, live, State()), generated_at=MOMENT,
                                   internal_domains=("acme.com",))
            calls = live.pages_read
            del desired, live
            write_report(out, made, changes=None, today=MOMENT.date())
            return calls

        # The report and the plan taken in turns, the best of each kept: the machine's speed drifts
        # (a virtual machine's CPU time counts the time its host lends elsewhere), and a ratio of
        # two runs minutes apart read that drift as well as the code.
        totals, plans = [], []
        for _ in range(repeat):
            calls, timing = best_of(1, run)
            totals.append(timing)
            plans.append(best_of(1, lambda: plan_with_client(open_session(emulator, clock).client,
                                                              load_desired(root / "manifest.yaml"), State()))[1])
        total, plan = min(totals, key=lambda t: t.cpu), min(plans, key=lambda t: t.cpu)
        emulator_cpu = min(s.transport.cpu for s in sessions)
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
        rows = sum(1 for _ in (out / "access.csv").open(encoding="utf-8")) - 1
        firsts = []
        for _ in range(repeat):
            found = re.search(r'data-first-rows-ms="(\d+)"', open_page(out / "index.html"))
            assert found is not None, "the page did not record its first rows"
            firsts.append(int(found.group(1)))
    assert calls == math.ceil(n / 100), calls
    return ReportResult(n, rows, calls, total, emulator_cpu, plan, peak, sizes, min(firsts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    results = [measure(n, repeat=args.repeat) for n in args.sizes]
    print("| workspaces | " + " | ".join(f"{r.n:,}" for r in results) + " |")
    print("|---|" + "---:|" * len(results))
    table: list[tuple[str, Callable[[ReportResult], str]]] = [
        ("access rows", lambda r: f"{r.rows:,} ({ENTRIES_PER_LIST} a workspace)"),
        ("listing calls (ceil(N/100))", lambda r: f"{r.calls:,}"),
        ("**report** wall / CPU (load + read + report + write)", lambda r: f"{r.total.wall:.2f} s / {r.total.cpu:.2f} s"),
        ("of which the emulator, CPU", lambda r: f"{r.emulator_cpu:.2f} s"),
        ("plan of the same company, CPU (load + read + plan)", lambda r: f"{r.plan.cpu:.2f} s"),
        ("report CPU / plan CPU", lambda r: f"{r.total.cpu / r.plan.cpu:.2f}×"),
        ("peak memory (tracemalloc)", lambda r: f"{r.peak / MIB:.0f} MiB ({r.peak / 10**6:.0f} MB)"),
        ("access.csv / access.json / index.html", lambda r: " / ".join(
            f"{r.sizes[name] / MIB:.1f} MiB" for name in ("access.csv", "access.json", "index.html"))),
        ("page: first rows in Chromium", lambda r: f"{r.first_rows_ms:,} ms"),
    ]
    for label, figure in table:
        print(f"| {label} | " + " | ".join(figure(r) for r in results) + " |")


if __name__ == "__main__":
    main()
