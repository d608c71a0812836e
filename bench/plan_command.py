"""The whole ``reconciler plan`` command against libyaml's event parse (issue 40, item 4).

What a user waits for: ``reconciler plan`` as a process of its own, reading the
company over HTTP from ``reconciler emulator serve`` (another process, seeded
with the company; ``bench.command_cpu`` serves it). The company is the
benchmark's (``bench/scenario.py``: N workspaces of 25 access entries, every
list in one manifest) governed as ``bench.governance`` governs it: every list
names a team of two, and a rule over every workspace ensures a user and a
second team of two. Both variants plan the same manifest; only the service
differs:

- **without changes**: the service holds every entry the manifest asks for
  (no drifted list either), so the plan is empty;
- **with changes**: the service lacks the rule's team (``security``) in every
  workspace, so the plan holds N access changes, 2N entries added.

For each, the plan process's CPU (user + system, from ``os.wait4`` on its pid:
the emulator's process is not in it), its peak RSS (``ru_maxrss`` of that
process alone), and their targets' yardstick: libyaml's event parse of the
same manifest file in this process (``bench.load_floor.event_parse``, the
cyclic GC paused: the least of 3 before the runs and one after each plan
run, so a quiet or busy minute weighs on both). The plan's CPU is the least of ``--repeat``
runs, its peak RSS the highest. The plan prints its text (the default format,
with the plan's digest) to a file; its summary line is checked against the
changes the variant must hold. Prints a markdown table, then one JSON line:

    .venv/bin/python -m bench.plan_command --sizes 1000,10000 --repeat 3

``--profile FILE`` adds, after the measured runs, one more plan of the
largest size with changes under ``python -m cProfile -o FILE`` (not measured).

``--against REV`` measures the code of git revision REV too (exported with
``git archive`` into a scratch directory, run with this interpreter and its
libraries), in turns with this checkout's: each turn plans with REV's code,
then with this checkout's, so a slow spell of the machine weighs on both. On
a shared machine one tree's CPU moves by a third between minutes; a change
of a few percent is only seen this way. Each turn's ratio (this checkout /
REV) is printed, and their median:

    .venv/bin/python -m bench.plan_command --sizes 10000 --repeat 3 --against main~3

``--instructions`` counts instructions instead (each plan under valgrind's
cachegrind, ``PYTHONHASHSEED=0``; the yardstick is the event parse's count,
the same child without the parse subtracted): the same run gives the same
count within 0.1%, where the CPU time of one tree moves by a third. It is not
the issues' figure (a Python loop runs fewer instructions a cycle than
libyaml's C), but it tells whether a step made the plan cheaper. A plan runs
about 15 times as long under it:

    .venv/bin/python -m bench.plan_command --sizes 10000 --instructions --against main~3
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import io
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from bench.command_cpu import CommandRun, _serve
from bench.governance import TEAMS, governed_manifest, governed_seed
from bench.load_floor import event_parse
from bench.scenario import TOKEN, _users, build
from bench.sizes import best_of, timed
from reconciler.gcpause import gc_paused

WITHOUT, WITH = "without changes", "with changes"
VARIANTS = (WITHOUT, WITH)
FLOOR_REPEAT = 3
MISSING_TEAM = "security"  # the rule's team, left out of the service in the variant with changes
# The targets at 10,000 workspaces: (plan CPU / event parse, peak RSS in MB).
TARGETS = {WITHOUT: (2.5, 300), WITH: (3.0, 400)}
_SUMMARY = re.compile(r"^Plan: (\d+) to add, (\d+) to change, (\d+) to remove\.$", re.MULTILINE)
_CHANGE = re.compile(r"^  [-+~±] \S+ \{$", re.MULTILINE)  # a change's block: "  ~ access {"


CHECKOUT = Path(__file__).resolve().parent.parent  # this checkout: the code the benchmark measures by default
THIS = "this checkout"
# Instruction counting: cachegrind without its cache simulation (the count is all it is asked for), and str
# hashes fixed, so dicts and sets iterate alike run after run.
CACHEGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no")
FIXED_HASHES = {"PYTHONHASHSEED": "0"}
# The event parse's child, and the same child without the parse: the difference is the parse's instructions.
_PARSE = ("import gc, sys; gc.disable(); from bench.load_floor import event_parse; "
          "text = open(sys.argv[1], encoding='utf-8').read(); PARSE and event_parse(text)")


class PlanFailed(RuntimeError):
    """The plan process exited with an error, or did not plan what its variant must hold."""


@dataclass(frozen=True)
class Code:
    """A tree of the tool's code the plan runs from: the child runs in ``root``, and ``python -m`` puts its
    working directory first on ``sys.path``, before the installed package (editable or not)."""

    label: str
    root: Path


def export_revision(revision: str, into: Path) -> Code:
    """The tree of git ``revision`` of this checkout, written under ``into`` (``git archive``)."""
    archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", "--format=tar", revision],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise PlanFailed(f"git archive {revision} failed: {archive.stderr.decode(errors='replace').strip()}")
    root = into / "code"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(root, filter="data")
    return Code(revision, root)


def steady_seed(n: int) -> dict[str, Any]:
    """The service holding exactly what the governed manifest of ``n`` workspaces asks for."""
    scenario = build(n)
    for i, workspace in enumerate(scenario.seed["companies"]["acme"]["workspaces"]):
        # Undo the scenario's drift: every list as the manifest writes it.
        workspace["users"] = [{"email": email, "role": role} for email, role in _users(i)]
    return governed_seed(scenario.seed)


def changed_seed(steady: dict[str, Any]) -> dict[str, Any]:
    """``steady`` without the rule's team in any workspace: one change, two entries added, in each."""
    changed = copy.deepcopy(steady)
    missing = set(TEAMS[MISSING_TEAM])
    for company in changed["companies"].values():
        for workspace in company["workspaces"]:
            workspace["users"] = [user for user in workspace["users"] if user["email"] not in missing]
    return changed


@dataclass(frozen=True)
class Planned:
    """What a plan's text holds: its changes (one block each) and its summary line's entry counts."""

    changes: int
    add: int
    change: int
    remove: int


def expected(variant: str, n: int) -> Planned:
    """What the plan of a variant must hold: nothing, or one change and the missing team's entries in each
    workspace."""
    if variant == WITHOUT:
        return Planned(0, 0, 0, 0)
    return Planned(n, len(TEAMS[MISSING_TEAM]) * n, 0, 0)


def planned(text: str) -> Planned:
    """The changes and entry counts of a plan's text (no summary line: an empty plan)."""
    summary = _SUMMARY.search(text)
    add, change, remove = (int(x) for x in summary.groups()) if summary else (0, 0, 0)
    return Planned(len(_CHANGE.findall(text)), add, change, remove)


def counted(command: Sequence[str], out_file: Path) -> list[str]:
    """``command`` under cachegrind, its count written to ``out_file``."""
    if shutil.which(CACHEGRIND[0]) is None:
        raise PlanFailed("--instructions runs each plan under valgrind, which is not installed: .ci/ensure-valgrind "
                         "installs it (Debian's valgrind)")
    return [*CACHEGRIND, f"--cachegrind-out-file={out_file}", *command]


def instructions_in(out_file: Path) -> int:
    """The instructions a cachegrind run counted: its ``summary:`` line."""
    text = out_file.read_text(encoding="utf-8") if out_file.exists() else ""
    found = re.search(r"^summary: (\d+)$", text, re.MULTILINE)
    if found is None:
        raise PlanFailed(f"{out_file}: no 'summary:' line: cachegrind did not count the run")
    return int(found.group(1))


def parse_instructions(manifest: Path, scratch: Path) -> int:
    """The instructions of libyaml's event parse of ``manifest`` (GC paused): a child that parses it, less the
    same child that only reads it."""
    counts = []
    for parse in (True, False):
        out = scratch / f"parse-{parse}.cg"
        run = run_child(counted([sys.executable, "-c", f"PARSE = {parse}; {_PARSE}", str(manifest)], out),
                        {**os.environ, **FIXED_HASHES}, scratch / "parse.out", scratch / "parse.err", cwd=CHECKOUT)
        if run.exit_code != 0:
            raise PlanFailed(f"the event parse under cachegrind exited {run.exit_code}: "
                             f"{(scratch / 'parse.err').read_text(encoding='utf-8')[-1500:]}")
        counts.append(instructions_in(out))
    return counts[0] - counts[1]


def run_child(command: Sequence[str], env: dict[str, str], out: Path, err: Path, cwd: Path | None = None
              ) -> CommandRun:
    """Run ``command`` (in ``cwd``), its output to ``out`` and ``err``; its own rusage from ``os.wait4`` on its
    pid. The child is killed if this process is interrupted while it runs."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(list(command), env=env, stdout=stdout, stderr=stderr, cwd=cwd)
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:
            process.kill()
            process.wait()
            raise
    process.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux.
    return CommandRun(usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024, usage.ru_minflt, process.returncode)


def plan_command(manifests: Path, *, profile: Path | None = None) -> list[str]:
    """``reconciler plan`` of ``manifests`` in this interpreter, under cProfile when ``profile`` is given."""
    prefix = ["-m", "cProfile", "-o", str(profile)] if profile else []
    return [sys.executable, *prefix, "-m", "reconciler", "plan", str(manifests)]


@dataclass(frozen=True)
class VariantResult:
    """Every plan run of one size and variant, and the event parse of its manifest."""

    n: int
    variant: str
    runs: tuple[CommandRun, ...]
    floor_cpu: float  # libyaml's event parse of the manifest: the least of FLOOR_REPEAT, then one after each plan
    events: int
    manifest_bytes: int
    planned: Planned
    code: str = THIS  # the tree the plan ran from (``Code.label``)
    instructions: tuple[int, ...] = ()  # with --instructions: each run's count (its CPU is valgrind's, not read)
    floor_instructions: int = 0  # with --instructions: the event parse's

    @property
    def counted(self) -> bool:
        return bool(self.instructions)

    @property
    def cpu(self) -> float:
        return min(run.cpu for run in self.runs)

    @property
    def peak_rss(self) -> int:
        return max(run.peak_rss for run in self.runs)

    @property
    def ratio(self) -> float:
        return self.cpu / self.floor_cpu


def _plan_runs(n: int, variant: str, root: Path, seed: Path, repeat: int, profile: Path | None,
               after_each: Callable[[], None], codes: Sequence[Code], instructions: bool = False,
               ) -> tuple[dict[str, list[tuple[CommandRun, int]]], Planned]:
    """``repeat`` turns, each a plan from each of ``codes`` in order; the runs by code label, each with its
    instruction count (0 unless ``instructions``: then each plan runs under cachegrind)."""
    manifests = root / "manifests"
    server, address = _serve(seed)
    try:
        env = {**os.environ, "RECONCILER_BASE_URL": address, "RECONCILER_TOKEN": TOKEN,
               "SOURCE_DATE_EPOCH": "1800000000"}
        runs: dict[str, list[tuple[CommandRun, int]]] = {code.label: [] for code in codes}
        if instructions:
            env.update(FIXED_HASHES)
        found = Planned(0, 0, 0, 0)
        out, err = root / "plan.txt", root / "plan.err"
        for _ in range(repeat):
            for code in codes:
                command = plan_command(manifests)
                run = run_child(counted(command, root / "plan.cg") if instructions else command, env, out, err,
                                cwd=code.root)
                text = out.read_text(encoding="utf-8")
                if run.exit_code != 0:
                    raise PlanFailed(f"reconciler plan ({code.label}) exited {run.exit_code} at {n:,} workspaces, "
                                     f"{variant}; its last output:\n{text[-1500:]}"
                                     f"{err.read_text(encoding='utf-8')[-1500:]}")
                found = planned(text)
                if found != expected(variant, n):
                    raise PlanFailed(f"the plan ({code.label}) at {n:,} workspaces, {variant}, holds {found}, "
                                     f"not {expected(variant, n)}:\n{text[-1500:]}")
                runs[code.label].append((run, instructions_in(root / "plan.cg") if instructions else 0))
                after_each()
        if profile is not None:
            profiled = run_child(plan_command(manifests, profile=profile), env, out, err, cwd=codes[-1].root)
            if profiled.exit_code != 0:
                raise PlanFailed(f"the profiled plan exited {profiled.exit_code}: "
                                 f"{err.read_text(encoding='utf-8')[-1500:]}")
        return runs, found
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


def measure(n: int, *, repeat: int, profile: Path | None = None, codes: Sequence[Code] = (Code(THIS, CHECKOUT),),
            instructions: bool = False) -> list[VariantResult]:
    """Both variants at ``n`` workspaces, planned from each of ``codes`` in turns (a result for each); ``profile``
    profiles one more plan with changes, from the last of ``codes``; ``instructions`` counts the instructions of
    each plan and of the event parse (cachegrind)."""
    steady = steady_seed(n)
    text = governed_manifest(build(n).manifest)
    parse = gc_paused()(lambda: event_parse(text))
    events, floor = best_of(FLOOR_REPEAT, parse)
    # The yardstick is taken again after each plan run, and the least of all is kept: on a shared machine
    # the CPU of both moves with the load, and three parses in one quiet (or busy) minute flattered (or
    # blamed) every plan of that size.
    floors = [floor.cpu]
    results = []
    with tempfile.TemporaryDirectory(prefix="plan-command-") as tmp:
        root = Path(tmp)
        (root / "manifests").mkdir()
        (root / "manifests" / "manifest.yaml").write_text(text, encoding="utf-8")
        floor_instructions = parse_instructions(root / "manifests" / "manifest.yaml", root) if instructions else 0
        for variant in VARIANTS:
            seed = root / "seed.yaml"
            # JSON is YAML.
            seed.write_text(json.dumps(steady if variant == WITHOUT else changed_seed(steady)), encoding="utf-8")
            runs, found = _plan_runs(n, variant, root, seed, repeat, profile if variant == WITH else None,
                                     # Counted, a plan's CPU is valgrind's: no yardstick taken after it.
                                     after_each=(lambda: None) if instructions else
                                     lambda: floors.append(timed(parse)[1].cpu), codes=codes,
                                     instructions=instructions)
            results += [VariantResult(n, variant, tuple(run for run, _ in runs[code.label]), 0.0, events,
                                      len(text.encode()), found, code.label,
                                      tuple(count for _, count in runs[code.label]) if instructions else (),
                                      floor_instructions) for code in codes]
    return [dataclasses.replace(result, floor_cpu=min(floors)) for result in results]


def _mb(size: int) -> str:
    return f"{size / 10**6:.0f} MB ({size / 2**20:.0f} MiB)"


def table(results: Sequence[VariantResult]) -> list[str]:
    """The markdown table: one row per size, variant and code, with the issue's targets (instruction counts
    instead, with no target, where they were counted)."""
    if results and results[0].counted:
        lines = ["| workspaces × 25 | variant | code | changes (entries added) | plan instructions | "
                 "event parse instructions | plan / parse, instructions |", "|---:|---|---|---:|---:|---:|---:|"]
        lines += [f"| {r.n:,} | {r.variant} | {r.code} | {r.planned.changes:,} ({r.planned.add:,}) | "
                  f"{min(r.instructions) / 1e9:.3f} G | {r.floor_instructions / 1e9:.3f} G | "
                  f"{min(r.instructions) / r.floor_instructions:.2f}× |" for r in results]
        return lines
    lines = ["| workspaces × 25 | variant | code | changes (entries added) | plan CPU (user + sys) | "
             "event parse CPU | plan / parse | target | plan peak RSS | target |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        ratio_target, rss_target = TARGETS[r.variant]
        lines.append(f"| {r.n:,} | {r.variant} | {r.code} | {r.planned.changes:,} ({r.planned.add:,}) | "
                     f"{r.cpu:.2f} s | {r.floor_cpu:.2f} s | {r.ratio:.2f}× | ≤ {ratio_target}× | "
                     f"{_mb(r.peak_rss)} | ≤ {rss_target} MB |")
    return lines


def turns(results: Sequence[VariantResult]) -> list[str]:
    """For each size and variant planned from two codes: each turn's ratio (the second code over the first,
    both planned within the same minute; their instructions where counted, else their CPU), and their median.
    Nothing for one code."""
    lines = []
    for first, second in zip(results, results[1:], strict=False):
        if (first.n, first.variant) != (second.n, second.variant):  # one code: one result a variant
            continue
        ratios = ([b / a for a, b in zip(first.instructions, second.instructions, strict=True)] if first.counted
                  else [b.cpu / a.cpu for a, b in zip(first.runs, second.runs, strict=True)])
        lines.append(f"{first.n:,}, {first.variant}: {second.code} / {first.code} "
                     f"{'instructions' if first.counted else 'CPU'} in each turn "
                     f"{', '.join(f'{r:.3f}' for r in ratios)}; median {statistics.median(ratios):.3f}")
    return lines


def json_line(results: Sequence[VariantResult]) -> str:
    """Every figure, one JSON object on one line (seconds, bytes)."""
    return json.dumps({"bench": "plan_command", "results": [
        {"workspaces": r.n, "variant": r.variant, "code": r.code, "changes": r.planned.changes,
         "entries_added": r.planned.add, "plan_cpu": round(r.cpu, 3),
         "plan_cpu_runs": [round(run.cpu, 3) for run in r.runs],
         "plan_user": round(min(r.runs, key=lambda run: run.cpu).user, 3),
         "plan_system": round(min(r.runs, key=lambda run: run.cpu).system, 3),
         "plan_peak_rss": r.peak_rss, "plan_peak_rss_runs": [run.peak_rss for run in r.runs],
         "event_parse_cpu": round(r.floor_cpu, 3), "events": r.events, "manifest_bytes": r.manifest_bytes,
         "ratio": round(r.ratio, 3), "instructions": list(r.instructions),
         "event_parse_instructions": r.floor_instructions} for r in results]}, separators=(",", ":"))


def _exit_on_terminate(signum: int, frame: FrameType | None) -> None:
    # SystemExit unwinds through the ``finally`` blocks: the children are killed, the files removed.
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> list[VariantResult]:
    parser = argparse.ArgumentParser(prog="python -m bench.plan_command", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="workspaces, comma-separated (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=1, help="plan runs of each variant, the least CPU kept")
    parser.add_argument("--profile", type=Path, help="cProfile one more plan of the largest size with changes")
    parser.add_argument("--against", metavar="REV",
                        help="plan with the code of git revision REV too, in turns with this checkout's")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions (valgrind's cachegrind) instead of timing: the same each run")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(",") if size.strip())
    if not sizes or args.repeat < 1:
        parser.error("give at least one size and --repeat 1 or more")
    handlers = {signum: signal.signal(signum, _exit_on_terminate) for signum in (signal.SIGTERM, signal.SIGHUP)}
    results: list[VariantResult] = []
    try:
        with tempfile.TemporaryDirectory(prefix="plan-command-code-") as scratch:
            codes = [Code(THIS, CHECKOUT)]
            if args.against:
                codes.insert(0, export_revision(args.against, Path(scratch)))
            for n in sizes:
                profile = args.profile.resolve() if args.profile and n == sizes[-1] else None
                results += measure(n, repeat=args.repeat, profile=profile, codes=codes,
                                   instructions=args.instructions)
    except PlanFailed as failure:
        sys.exit(f"error: {failure}")
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    print("\n".join(table(results)))
    print()
    if args.against:
        print("\n".join(turns(results)))
        print()
    print(json_line(results))
    return results


if __name__ == "__main__":
    main()
