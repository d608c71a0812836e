"""Everything ``python -m bench`` measures for one company size N.

Order of work for one N (one emulator, one virtual clock; each run is a
fresh client with its own limiter and counters, a quiet gap apart):

1. floors: the manifest text parsed by libyaml's ``CSafeLoader`` alone, and
   the listing's page bodies (kept by a first, untimed plan) decoded by
   ``json.loads`` alone;
2. ``validate``: ``load_desired`` of the manifest (what ``reconciler
   validate`` does before printing one line);
3. ``plan``: ``load_desired`` + ``plan_with_client`` (the product's read and
   plan path; rendering is left out), wall and CPU, each phase on its own,
   with the emulator's share measured inside its transport;
4. peak memory of step 3 in a run of its own under ``tracemalloc`` (it slows
   Python down several times, which would distort the times), started after
   the emulator was built: the tool's allocations plus the pages the emulator
   renders meanwhile;
5. apply of the plan from an empty state: calls, 429s, virtual time against
   the least time the documented limit (120 calls a minute) allows;
6. one ``write_state`` of the state the apply left, every list recorded
   (what each change of an apply paid to keep the state current while the
   whole file was rewritten per change; now what one apply pays once, at its
   fold), and one journal append + fsync of a change beside that state (what
   each change of an apply pays now: ``StateJournal.append``, the mean of
   ``JOURNAL_APPENDS`` appends after the one that creates the journal);
7. a plan from the state the apply wrote (every later plan has a state):
   its changes (none) and its time.

Times are the best of ``repeat`` runs (floors, validate and plan alike).
"""

from __future__ import annotations

import gc
import json
import math
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml

from reconciler.apply import apply_plan
from reconciler.commands.plan import plan_with_client
from reconciler.gcpause import gc_paused
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.state import State, StateJournal, journal_path, write_state

from bench.scenario import ENTRIES_PER_LIST, build
from bench.service import Session, make_emulator, open_session

PAGE_SIZE = 100
DEFAULT_PER_MINUTE = 120  # the documented default class limit (the service documentation)
JOURNAL_APPENDS = 20  # appends timed for the per-change journal figure (one fsync each: noisy alone)

T = TypeVar("T")


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


@dataclass(frozen=True)
class SizeResult:
    """The figures of one N; every time in seconds, memory in bytes."""

    n: int
    entries: int
    drifted: int
    setup_wall: float  # building the scenario and the emulator (not part of any figure)
    yaml_floor: Timing
    yaml_floor_peak: int  # tracemalloc peak of the YAML floor: what libyaml's loading needs by itself
    json_floor: Timing
    page_bytes: int
    validate: Timing
    plan: Timing  # load_desired + plan_with_client
    plan_read: Timing  # of ``plan``: plan_with_client alone (read the listing, make the plan)
    plan_emulator: Timing  # of ``plan``: spent inside the in-process emulator
    plan_peak: int
    plan_calls: int
    plan_virtual: float
    changes: int
    apply_calls: int
    apply_429s: int
    apply_virtual: float
    apply_least: float
    apply_least_plan: float  # what the plan itself says
    apply_wall: float
    apply_emulator: Timing  # of the apply: spent inside the in-process emulator
    state_write: Timing  # one write_state of the state the apply left (every list recorded)
    state_bytes: int
    journal_append: Timing  # one change recorded by apply now: one journal line appended and fsynced (mean)
    replan_changes: int | None  # a plan after the apply, from the state it wrote (None: not run)
    replan: Timing | None  # load_desired + plan_with_client with that state
    max_rss: int  # the process's peak resident set so far (emulator included), bytes

    @property
    def bound(self) -> int:
        return math.ceil(self.n / PAGE_SIZE) + 2

    @property
    def per_resource_calls(self) -> int:
        """A generic provider's refresh: the listing for the ids, then one GET per workspace."""
        return self.n + math.ceil(self.n / PAGE_SIZE)

    @property
    def floors(self) -> float:
        return self.yaml_floor.cpu + self.json_floor.cpu

    @property
    def tool_cpu(self) -> float:
        """Plan CPU less the emulator's: the tool's own work."""
        return self.plan.cpu - self.plan_emulator.cpu

    @property
    def apply_ratio(self) -> float:
        return self.apply_virtual / self.apply_least if self.apply_least else 1.0


def least_seconds(calls: int, per_minute: int = DEFAULT_PER_MINUTE) -> float:
    """At most ``per_minute`` calls in any minute: the first go at once, each
    further batch waits a minute (worked out here from the documented limit,
    not taken from the planner)."""
    return 60.0 * math.floor((calls - 1) / per_minute) if calls > 0 else 0.0


def timed(func: Callable[[], T]) -> tuple[T, Timing]:
    """``func()`` and its wall and CPU time, with the cyclic GC settled first."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    value = func()
    return value, Timing(time.perf_counter() - wall, time.process_time() - cpu)


def best_of(repeat: int, func: Callable[[], T]) -> tuple[T, Timing]:
    """The last value and the fastest of ``repeat`` runs (by CPU; wall of that run)."""
    value, best = timed(func)
    for _ in range(repeat - 1):
        value, timing = timed(func)
        if timing.cpu < best.cpu:
            best = timing
    return value, best


def measure_size(n: int, *, repeat: int = 1, replan: bool = True, workdir: Path | None = None) -> SizeResult:
    """Every figure for a company of ``n`` workspaces (see the module docstring)."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        return _measure(n, Path(tmp), repeat=repeat, replan=replan)


@dataclass
class _PlanRun:
    """One ``load_desired`` + ``plan_with_client`` on a fresh session, timed by phase."""

    plan: Plan
    session: Session
    load: Timing
    read_plan: Timing

    @property
    def total(self) -> Timing:
        return Timing(self.load.wall + self.read_plan.wall, self.load.cpu + self.read_plan.cpu)


def _measure(n: int, root: Path, *, repeat: int, replan: bool) -> SizeResult:
    setup = time.perf_counter()
    scenario = build(n)
    manifest_text, drifted = scenario.manifest, scenario.drifted
    manifest = root / "manifest.yaml"
    manifest.write_text(manifest_text, encoding="utf-8")
    emulator, clock = make_emulator(scenario.seed)
    del scenario  # the emulator holds its own copy of the company
    setup_wall = time.perf_counter() - setup

    def plan_run(keep_bodies: bool = False, state: State | None = None) -> _PlanRun:
        session = open_session(emulator, clock, keep_bodies=keep_bodies)
        desired, load = timed(lambda: load_desired(manifest))
        plan, read_plan = timed(lambda: plan_with_client(session.client, desired, state or State()))
        return _PlanRun(plan, session, load, read_plan)

    bodies = plan_run(keep_bodies=True).session.transport.bodies  # also warms up every code path once
    # The floors run with the cyclic GC paused, as the tool's own loading does
    # (reconciler/gcpause.py): the floor is the parsing alone.
    _, yaml_floor = best_of(repeat, gc_paused()(lambda: yaml.load(manifest_text, Loader=yaml.CSafeLoader)))  # noqa: S506
    _, json_floor = best_of(repeat, gc_paused()(lambda: [json.loads(b) for b in bodies]))
    _, validate = best_of(repeat, lambda: load_desired(manifest))
    yaml_peak = _peak_memory(gc_paused()(lambda: yaml.load(manifest_text, Loader=yaml.CSafeLoader)))  # noqa: S506

    best: _PlanRun | None = None
    for _ in range(repeat):
        run = plan_run()
        if best is None or run.total.cpu < best.total.cpu:
            best = run
    assert best is not None
    plan, metered = best.plan, best.session.transport
    peak = _peak_memory(lambda: plan_run())

    session = open_session(emulator, clock)
    wall = time.perf_counter()
    result = apply_plan(plan, client=session.client, state=State(), state_path=root / "reconciler.state.json")
    apply_wall = time.perf_counter() - wall
    apply_calls, apply_429s = session.client.stats.calls, session.client.stats.rate_limited
    apply_virtual = session.virtual_elapsed()
    apply_emulator = Timing(session.transport.wall, session.transport.cpu)
    # Once every list is recorded, each change of a later apply rewrites (and
    # fsyncs) the whole file: this is what one such write costs.
    probe = root / "probe.state.json"
    _, state_write = timed(lambda: write_state(probe, result.state))
    journal_append = _journal_append(probe, result.state)
    again = plan_run(state=result.state) if replan else None

    return SizeResult(
        n=n,
        entries=n * ENTRIES_PER_LIST,
        drifted=drifted,
        setup_wall=setup_wall,
        yaml_floor=yaml_floor,
        yaml_floor_peak=yaml_peak,
        json_floor=json_floor,
        page_bytes=sum(len(b) for b in bodies),
        validate=validate,
        plan=best.total,
        plan_read=best.read_plan,
        plan_emulator=Timing(metered.wall, metered.cpu),
        plan_peak=peak,
        plan_calls=best.session.client.stats.calls,
        plan_virtual=best.session.virtual_elapsed(),
        changes=len(plan.changes),
        apply_calls=apply_calls,
        apply_429s=apply_429s,
        apply_virtual=apply_virtual,
        apply_least=least_seconds(apply_calls),
        apply_least_plan=plan.cost.min_seconds,
        apply_wall=apply_wall,
        apply_emulator=apply_emulator,
        state_write=state_write,
        state_bytes=probe.stat().st_size,
        journal_append=journal_append,
        replan_changes=len(again.plan.changes) if again is not None else None,
        replan=again.total if again is not None else None,
        max_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )


def _journal_append(state_path: Path, state: State) -> Timing:
    """What recording one change costs an apply in state I/O now: one line
    (one list's record, as apply journals it) appended to the journal beside
    ``state_path`` and fsynced; the mean of ``JOURNAL_APPENDS``, after the
    append that creates the journal (once per apply)."""
    address, resource = next((a, r) for a, r in state.resources.items() if r.access is not None)
    entry = {"set": {address: resource.model_dump(mode="json", exclude_none=True)}}
    journal = StateJournal(state_path, state)
    try:
        journal.append(entry)
        def appends() -> None:
            for _ in range(JOURNAL_APPENDS):
                journal.append(entry)

        _, total = timed(appends)
    finally:
        journal.close()
        journal_path(state_path).unlink(missing_ok=True)
    return Timing(total.wall / JOURNAL_APPENDS, total.cpu / JOURNAL_APPENDS)


def _peak_memory(func: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

