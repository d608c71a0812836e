"""Crash: ``kill -9`` an apply at a random moment, 30 times, and recover as a user would.

Each run serves a fresh ``reconciler emulator serve`` (its own data file) for
a copy of examples/onboarding, starts ``reconciler apply`` against it in a
subprocess, and kills it with SIGKILL after a seeded random delay.  Then:

- the state file parses (or is absent), and its serial never goes back;
- a lock left behind names its holder, which is dead on this host: the next
  apply takes it over by itself and says so (no ``force-unlock`` needed);
- ``reconciler apply`` again until it succeeds; when the kill fell after a
  workspace's creation and before the state recorded it, the next plan
  adopts it by the intent journaled before the call (a credit is never spent
  twice); should a plan name ``reconciler import ADDRESS ID`` instead, the
  test runs that import, as a user would, and counts it;
- a file asset whose creation was cut off is retried (one file backs one
  asset: a second creation is refused with 409, and apply then names the
  import); a link or embed whose creation was in flight is never sent again:
  the plan says it needs a person (apply does the rest and exits 1), and the
  test runs the command the plan prints for what it finds, as a person would;
- the next plan says "No changes.", one workspace exists per manifest entry,
  exactly two credits were spent, and no asset exists twice.

Creations get a little latency on the emulator so that a share of the kills
land while one is in flight, the case the import is for.  The emulator runs
60 times faster than the wall clock, so rate-limit windows cost no time, and
runs go four at a time.  The figures are printed (``pytest -s``) and checked.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from reconciler.state import LockHolder, State, load_state, lock_path
from tests.e2e.conftest import ROOT, TOKEN

ONBOARDING = ROOT / "examples" / "onboarding"
RUNS = 30
SEED = 20261125
WORKERS = 4
TIME_SCALE = 60
CREATION_LATENCY = 0.1  # wall seconds each workspace or asset creation takes on the emulator
KICKOFF = "Customer Inc – Kickoff"
CREDITS_IN_SEED = 25
CREATIONS_IN_MANIFEST = 2
ASSET_NAMES = ("Pricing 2027", "Onboarding checklist", "Customer Inc website", "Book a call")
RECONCILER = [sys.executable, "-m", "reconciler"]
ADDRESS = re.compile(r"http://[\w.:\[\]-]+")
# A real id (ws_1, asset_3), never a placeholder such as ASSET_ID.
# Printed complete (PATH, --state, the service): run as printed.
# Single-quoted; or double-quoted when a word in it needs the shell's quotes (a postgresql:// --state).
IMPORT_COMMAND = re.compile(r"'(reconciler import \S+ [a-z][\w-]*[^']*)'|\"(reconciler import \S+ [a-z][\w-]*[^\"]*)\"")
# An asset whose creation a kill cut off: the 409 of the retry proves it exists ...
ASSET_CONFLICT = re.compile(r"(asset\.\S+) \([^)]*\): the service says file (\S+) already backs an asset")
# ... or, for a link or embed, nothing can tell: the plan says it needs a person, creates
# nothing, and prints a command for each finding (adopt it, or forget the doubt).
NEEDS_PERSON = re.compile(r"\d+ resources? needs? a person")
PRINTED_COMMAND = re.compile(r"^    If [^:]+:\s+(reconciler .+)$", re.MULTILINE)


@dataclass
class Run:
    """What one run saw."""

    delay: float
    killed: bool = False
    lock_left: bool = False
    imports: list[str] = field(default_factory=list)
    serials: list[int] = field(default_factory=list)
    asset_conflicts: list[str] = field(default_factory=list)
    asset_doubts: list[str] = field(default_factory=list)
    attempts: int = 1
    seconds: float = 0.0


class Workdir:
    """One run's files: the manifests, the state, the emulator's data."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True)
        self.root = root
        self.project = root / "onboarding"
        shutil.copytree(ONBOARDING, self.project)
        self.state = root / "state.json"
        self.data = root / "emulator.yaml"
        self.base_url = ""

    def reconciler(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RECONCILER, *args], capture_output=True, text=True, env=_env(), cwd=self.root,
                              timeout=120)

    def state_arg(self) -> str:
        """What --state is given."""
        return str(self.state)

    def load(self) -> State | None:
        """The state (raises on a torn or invalid one); ``None`` when there is none."""
        return load_state(self.state) if self.state.exists() else None

    def break_stale_lock(self, run: Run, killed_pid: int) -> None:
        _break_stale_lock(self, run, killed_pid)

    def assert_unlocked(self) -> None:
        assert not lock_path(self.state).exists()

    def apply_args(self) -> list[str]:
        return ["apply", str(self.project), "--base-url", self.base_url, "--auto-approve", "--state", self.state_arg()]

    def company(self) -> dict[str, object]:
        data = yaml.safe_load(self.data.read_text(encoding="utf-8"))
        return data["companies"]["acme"]  # type: ignore[no-any-return]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RECONCILER_BASE_URL", "NO_COLOR")}
    return {**env, "RECONCILER_TOKEN": TOKEN, "NO_COLOR": "1"}


@contextmanager
def emulator_serving(work: Workdir, faults: tuple[str, ...] = ()) -> Iterator[None]:
    """``reconciler emulator serve`` in a subprocess; its address is the first line it prints.
    ``faults`` are more ``--fault`` specs."""
    latency = f"kind=latency,seconds={CREATION_LATENCY * TIME_SCALE},times=always"
    server = subprocess.Popen(
        [*RECONCILER, "emulator", "serve", "--port", "0", "--seed", str(work.project / "seed.yaml"),
         "--data", str(work.data), "--time-scale", str(TIME_SCALE),
         "--fault", f"method=POST,path=/connected-workspaces$,{latency}",
         "--fault", f"method=POST,path=^/v1/assets$,{latency}", *(f"--fault={f}" for f in faults)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=work.root)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "" when it exits: never a wait on a server that runs
        found = ADDRESS.search(line)
        assert found, f"emulator serve printed no address first: {line!r}"
        work.base_url = found.group(0)
        yield
    finally:
        server.kill()
        server.communicate(timeout=30)


def test_an_apply_killed_at_random_moments_always_recovers_without_duplicates(tmp_path: Path) -> None:
    started = time.monotonic()
    full = _calibrate(Workdir(tmp_path / "calibration"))
    rng = random.Random(SEED)
    delays = [rng.uniform(0.0, 0.9) * full for _ in range(RUNS)]
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = list(pool.map(lambda i: _crash_run(tmp_path / f"run-{i:02d}", delays[i]), range(RUNS)))
    elapsed = time.monotonic() - started

    imports = Counter(address for run in runs for address in run.imports)
    print(f"\ncrash test: {RUNS} runs, {sum(r.killed for r in runs)} killed mid-apply "
          f"(a whole apply takes {full:.2f} s; kills after 0-{0.9 * full:.2f} s, seed {SEED}); "
          f"{sum(r.lock_left for r in runs)} left the lock (taken over by the next apply); "
          f"{sum(bool(r.imports) for r in runs)} needed 'reconciler import' ({dict(imports)}), "
          f"{sum(bool(r.asset_conflicts) for r in runs)} of them for a file asset whose creation was cut off; "
          f"{sum(bool(r.asset_doubts) for r in runs)} had a link/embed in doubt, resolved by hand "
          f"({[d for r in runs for d in r.asset_doubts]}); "
          f"{sum(r.attempts - 1 for r in runs)} attempt(s) repeated because the apply ended before the kill; "
          f"{elapsed:.1f} s in all, {max(r.seconds for r in runs):.1f} s for the longest run")
    assert len(runs) == RUNS and all(run.killed for run in runs)


def _calibrate(work: Workdir) -> float:
    """The wall time of one whole apply, from start to exit: kills are spread over it."""
    with emulator_serving(work):
        began = time.monotonic()
        result = work.reconciler(*work.apply_args())
        took = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    return took


def _crash_run(root: Path, delay: float, make: type[Workdir] = Workdir) -> Run:
    """One run: again, on a fresh emulator and sooner, while the apply
    finished before the kill (a machine faster than the calibration)."""
    for attempt in range(4):
        run = _kill_and_recover(root / f"attempt-{attempt}", delay, make)
        if run.killed:
            run.attempts = attempt + 1
            return run
        delay /= 2
    raise AssertionError(f"{root}: the apply finished before every kill")


def _kill_and_recover(root: Path, delay: float, make: type[Workdir] = Workdir) -> Run:
    began = time.monotonic()
    work = make(root)
    run = Run(delay=delay)
    with emulator_serving(work):
        apply = subprocess.Popen([*RECONCILER, *work.apply_args()], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=_env(), cwd=work.root)
        time.sleep(delay)
        run.killed = apply.poll() is None
        apply.kill()
        apply.wait()  # reaped, as a CI runner reaps it: a zombie would still look alive
        recover(work, run, apply.pid)
    work.assert_unlocked()
    run.seconds = time.monotonic() - began
    return run


def recover(work: Workdir, run: Run, killed_pid: int) -> None:
    """What a person does after ``kill -9`` of an apply, checked at each step,
    until the plan says "No changes." and the service holds everything once."""
    # A creation in flight still completes on the service; recovery starts
    # once it has (a listing made before would not see it).
    time.sleep(2 * CREATION_LATENCY)
    _check_state(work, run)
    work.break_stale_lock(run, killed_pid)
    _apply_until_done(work, run)
    plan = work.reconciler("plan", str(work.project), "--base-url", work.base_url, "--state", work.state_arg())
    if _resolve_asset_doubts(work, run, plan.stdout):
        _apply_until_done(work, run)
        plan = work.reconciler("plan", str(work.project), "--base-url", work.base_url, "--state",
                               work.state_arg())
    assert plan.returncode == 0 and "No changes." in plan.stdout, plan.stdout + plan.stderr
    assert "earlier apply" not in plan.stdout, plan.stdout
    _check_service(work, run)


def _check_state(work: Workdir, run: Run) -> None:
    """The state parses (or is absent), and its serial never goes back."""
    state = work.load()  # raises on a torn or invalid state
    if state is None:
        assert not run.serials, f"{work.root}: the state disappeared"
        return
    serial = state.serial
    assert not run.serials or serial >= run.serials[-1], f"{work.root}: serial went back {run.serials} → {serial}"
    run.serials.append(serial)


def _break_stale_lock(work: Workdir, run: Run, killed_pid: int) -> None:
    """A lock left by the kill names the dead holder; the next apply takes
    it over by itself, says so, and releases it as it ends."""
    lock = lock_path(work.state)
    holder = LockHolder.read(lock)
    if holder is None:
        return
    run.lock_left = True
    assert holder.id is not None and holder.pid == killed_pid, f"{work.root}: {lock.read_text(encoding='utf-8')!r}"
    taking = work.reconciler(*work.apply_args())
    assert (f'Took over the lock of the state {work.state} left by "reconciler apply" (lock ID {holder.id}, since '
            f"{holder.since}): pid {killed_pid} on this host is no longer running") in taking.stderr, taking.stderr
    assert not lock.exists()
    _check_state(work, run)


def _apply_until_done(work: Workdir, run: Run) -> None:
    """Apply again; run the import a refused plan names; at most three tries."""
    for _ in range(3):
        result = work.reconciler(*work.apply_args())
        _check_state(work, run)
        if result.returncode == 0:
            return
        if NEEDS_PERSON.search(result.stderr):
            return  # everything else is done; the plan's commands settle the rest
        found = IMPORT_COMMAND.search(result.stderr)
        if found:
            command = shlex.split(found.group(1) or found.group(2))
            imported = work.reconciler(*command[1:])
        else:
            command = _asset_import_from_conflict(result.stderr, run, work)
            assert command, f"{work.root}: apply failed without naming an import:\n{result.stderr}"
            imported = work.reconciler(*command[1:], str(work.project), "--base-url", work.base_url,
                                       "--state", work.state_arg())
        assert imported.returncode == 0, imported.stderr
        run.imports.append(command[2])
        _check_state(work, run)
    raise AssertionError(f"{work.root}: no convergence within 3 applies: {result.stderr}")


def _asset_import_from_conflict(stderr: str, run: Run, work: Workdir) -> list[str] | None:
    """The import apply asks for when a file asset's creation answer was cut
    off (it names the file; the person finds the asset in the web app: here,
    in the emulator's data, the asset of that file); counted apart."""
    found = ASSET_CONFLICT.search(stderr)
    if found is None:
        return None
    run.asset_conflicts.append(found.group(1))
    assets = work.company().get("assets") or []
    asset_id = next(a["id"] for a in assets if a.get("fileId") == found.group(2))  # type: ignore[union-attr, index]
    return ["reconciler", "import", found.group(1), asset_id]


def _resolve_asset_doubts(work: Workdir, run: Run, plan_output: str) -> bool:
    """A link or embed whose creation was in flight at the kill: the plan
    says it needs a person and creates nothing. As a person would, look in
    the service, and run the command the plan prints for what is found:
    the import if it is there (its id filled in), else the state rm."""
    if not NEEDS_PERSON.search(plan_output):
        return False
    printed = [shlex.split(found.group(1)) for found in PRINTED_COMMAND.finditer(plan_output)]
    imports = {words[2]: words for words in printed if words[1] == "import"}
    forgets = {words[3]: words for words in printed if words[1:3] == ["state", "rm"]}
    assert imports and imports.keys() == forgets.keys(), plan_output
    loaded = work.load()
    known = {r.id for r in loaded.resources.values()} if loaded is not None else set()
    for address in imports:
        name = _ASSET_NAME_BY_ADDRESS[address]
        assets = work.company().get("assets") or []
        there = [a["id"] for a in assets if a["name"] == name and a["id"] not in known]  # type: ignore[index]
        command = ([there[0] if w == "ASSET_ID" else w for w in imports[address]] if there else forgets[address])
        done = work.reconciler(*command[1:])  # as printed: PATH and --state are in it
        assert done.returncode == 0, done.stderr
        run.asset_doubts.append(f"{address}: {'imported' if there else 'forgotten'}")
    return True


_ASSET_NAME_BY_ADDRESS = {"asset.pricing-sheet": "Pricing 2027", "asset.onboarding-checklist": "Onboarding checklist",
                          "asset.website": "Customer Inc website", "asset.booking": "Book a call"}


def _check_service(work: Workdir, run: Run) -> None:
    """One workspace per manifest entry, one credit per creation, one asset per entry."""
    company = work.company()
    names = Counter(w["name"] for w in company["workspaces"])  # type: ignore[index, union-attr]
    assert names[KICKOFF] == 1, f"{work.root}: {names}"
    assert all(count == 1 for count in names.values()), f"{work.root}: {names}"
    assert company["credits"] == CREDITS_IN_SEED - CREATIONS_IN_MANIFEST, f"{work.root}: {company['credits']}"
    assets = Counter(a["name"] for a in company.get("assets") or [])  # type: ignore[union-attr, index]
    assert assets == Counter(ASSET_NAMES), f"{work.root}: {assets}"  # each once: no asset is ever made twice