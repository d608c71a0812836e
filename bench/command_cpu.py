"""Benchmark: ``reconciler report`` against ``reconciler plan``, each run as a user runs it.

The company is the benchmark's (``bench/scenario.py``: N workspaces of 25
access entries, every list in one manifest, one list in ten drifted).  The
emulator is served over HTTP on 127.0.0.1 by ``reconciler emulator serve``
in a process of its own, and each command is a process of its own too, so
each one's CPU time (user + system, from ``wait4``) is the whole command as
``time reconciler ...`` reads it: the interpreter and its imports, the
manifests loaded, the one listing read over HTTP, and the command's own work
and output (the plan's text, with its changes and digest line, to a file; the
report's three files).  The emulator's CPU is not in either.

The two commands run in turns and the best of ``--repeat`` runs of each is
kept: CPU time on a virtual machine drifts over minutes, and turns keep a
slow spell from landing on one command only.  Each turn's own ratio is shown
too (how many turns the report took no more CPU than the plan, and their
median), and every turn's figures after the tables.  Run:

    .venv/bin/python -m bench.command_cpu 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.scenario import TOKEN, build

REPORT_DOMAIN = "acme.com"


@dataclass(frozen=True)
class CommandRun:
    user: float  # seconds
    system: float
    peak_rss: int  # bytes
    minor_faults: int
    exit_code: int

    @property
    def cpu(self) -> float:
        """User + system seconds of the command's process."""
        return self.user + self.system


def _run(arguments: list[str], env: dict[str, str], stdout: Path) -> CommandRun:
    with stdout.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "reconciler", *arguments], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux.
    return CommandRun(usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024, usage.ru_minflt, process.returncode)


def _serve(seed: Path) -> tuple[subprocess.Popen[str], str]:
    """``reconciler emulator serve`` on a free port (its clock 60 times faster, so no run waits
    out a rate-limit window); its first line is the address."""
    server = subprocess.Popen([sys.executable, "-m", "reconciler", "emulator", "serve", "--seed", str(seed),
                               "--port", "0", "--time-scale", "60"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    address = next((word for word in line.split() if word.startswith("http://")), None)
    if address is None:
        server.kill()
        raise RuntimeError(f"the emulator did not say its address: {line!r}")
    return server, address


def measure(n: int, *, repeat: int) -> tuple[list[CommandRun], list[CommandRun]]:
    """Every run of ``reconciler report`` and of ``reconciler plan`` of N workspaces, in turns
    (the report's i-th run just before the plan's i-th)."""
    scenario = build(n)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manifests = root / "manifests"
        manifests.mkdir()
        (manifests / "manifest.yaml").write_text(scenario.manifest, encoding="utf-8")
        seed = root / "seed.yaml"
        seed.write_text(json.dumps(scenario.seed), encoding="utf-8")  # JSON is YAML
        del scenario
        server, address = _serve(seed)
        try:
            env = {**os.environ, "RECONCILER_BASE_URL": address, "RECONCILER_TOKEN": TOKEN,
                   "SOURCE_DATE_EPOCH": "1800000000"}
            reports: list[CommandRun] = []
            plans: list[CommandRun] = []
            for _ in range(repeat):
                report = _run(["report", str(manifests), "--out", str(root / "out"),
                               "--internal-domain", REPORT_DOMAIN], env, root / "report.txt")
                plan = _run(["plan", str(manifests)], env, root / "plan.txt")
                if report.exit_code != 0 or plan.exit_code != 0:
                    raise RuntimeError(f"report exited {report.exit_code}, plan {plan.exit_code}: see "
                                       f"{(root / 'report.txt').read_text()[-2000:]}"
                                       f"{(root / 'plan.txt').read_text()[-2000:]}")
                reports.append(report)
                plans.append(plan)
        finally:
            server.kill()
            server.wait()
    return reports, plans


def least(runs: list[CommandRun]) -> CommandRun:
    """The run of least CPU."""
    return min(runs, key=lambda run: run.cpu)


def turn_ratios(reports: list[CommandRun], plans: list[CommandRun]) -> list[float]:
    """Each turn's report CPU over its plan CPU: the two ran one after the other, so a slow spell of
    the machine lands on both of a turn more often than on one."""
    return [report.cpu / plan.cpu for report, plan in zip(reports, plans, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    measured = [(n, *measure(n, repeat=args.repeat)) for n in args.sizes]
    print("| workspaces | report CPU | plan CPU | report / plan | turns: report ≤ plan | turns' ratios, median |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, reports, plans in measured:
        report, plan, ratios = least(reports), least(plans), turn_ratios(reports, plans)
        print(f"| {n:,} | {report.cpu:.2f} s | {plan.cpu:.2f} s | {report.cpu / plan.cpu:.2f}× | "
              f"{sum(r <= 1 for r in ratios)} of {len(ratios)} | {statistics.median(ratios):.2f}× |")
    print()
    print("| the run kept | user | system | peak RSS | minor page faults |")
    print("|---|---:|---:|---:|---:|")
    for n, reports, plans in measured:
        for name, run in (("report", least(reports)), ("plan", least(plans))):
            print(f"| {name}, {n:,} | {run.user:.2f} s | {run.system:.2f} s | {run.peak_rss / 2**20:.0f} MiB | "
                  f"{run.minor_faults:,} |")
    print()
    print("Every turn (report, then plan), CPU in seconds: " + "; ".join(
        f"{n:,}: " + ", ".join(f"{r.cpu:.2f}/{p.cpu:.2f}" for r, p in zip(reports, plans, strict=True))
        for n, reports, plans in measured))


if __name__ == "__main__":
    main()
