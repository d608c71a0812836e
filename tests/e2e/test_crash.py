"""Crash: ``kill -9`` an apply at a random moment, 30 times, and recover as a user would.

Each run serves a fresh ``reconciler emulator serve`` (its own data file;
tests/e2e/counted_emulator.py, which also counts the requests it is handling)
for a copy of examples/onboarding, starts ``reconciler apply`` against it in a
subprocess, waits until the apply holds the state's lock (it has begun), and
kills it with SIGKILL after a seeded random delay from then.  The apply is
frozen (SIGSTOP) for the kill, so that whether it still held the lock, and so
was killed mid-apply, is seen rather than guessed; a kill that came after the
apply had finished is run again, sooner.  Then:

- the state file parses (or is absent), and its serial never goes back;
- a lock left behind names its holder, which is dead on this host: the next
  apply takes it over by itself and says so (no ``force-unlock`` needed);
- once the emulator has handled every request the dead apply had sent (a
  creation in flight still completes on the service), ``reconciler apply``
  again until it succeeds; when the kill fell after a
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
runs go four at a time.  The figures are printed (``pytest -s``) and checked:
every run ends with a kill that landed while the apply held the lock.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import signal
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
from tests.e2e.counted_emulator import counted_emulator, in_flight
from tests.waiting import said, wait_for_exit, wait_until

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
    killed: bool = False  # the kill landed while the apply held the state's lock
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

    def locked_by(self, pid: int) -> bool:
        """Whether process ``pid`` holds the state's lock now (the lock file names it)."""
        holder = LockHolder.read(lock_path(self.state))
        return holder is not None and holder.pid == pid

    def logs(self) -> tuple[Path, Path]:
        """Where a started apply's stdout and stderr go: read when a wait fails."""
        return self.root / "apply.out", self.root / "apply.err"

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
    """``reconciler emulator serve`` (counting its requests) in a subprocess; its address is the
    first line it prints.  ``faults`` are more ``--fault`` specs."""
    latency = f"kind=latency,seconds={CREATION_LATENCY * TIME_SCALE},times=always"
    with counted_emulator("--seed", str(work.project / "seed.yaml"), "--data", str(work.data),
                          "--time-scale", str(TIME_SCALE),
                          "--fault", f"method=POST,path=/connected-workspaces$,{latency}",
                          "--fault", f"method=POST,path=^/v1/assets$,{latency}", *(f"--fault={f}" for f in faults),
                          env=_env(), cwd=work.root) as base_url:
        work.base_url = base_url
        yield


def start_apply(work: Workdir) -> subprocess.Popen[bytes]:
    """``reconciler apply`` in a subprocess, its output in files (``work.logs()``)."""
    out, err = work.logs()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        return subprocess.Popen([*RECONCILER, *work.apply_args()], stdout=stdout, stderr=stderr, env=_env(),
                                cwd=work.root)


def wait_for_the_lock(work: Workdir, apply: subprocess.Popen[bytes]) -> bool:
    """Until ``apply`` holds the state's lock (True: it has begun), or has exited (False: it ran
    whole between two looks, which must have succeeded); fails, saying what the apply printed, when
    it does neither within the deadline or exits with an error."""
    seen = wait_until(lambda: "locked" if work.locked_by(apply.pid) else "exited" if apply.poll() is not None
                      else None,
                      what=lambda: f"{work.root}: the apply never took the lock: {said(apply, *work.logs())}")
    if seen == "exited":
        assert apply.returncode == 0, f"{work.root}: the apply failed before the kill: {said(apply, *work.logs())}"
    return seen == "locked"


def wait_until_the_emulator_is_idle(work: Workdir) -> None:
    """Until the emulator handles no request: one the killed apply had sent has been answered to
    nobody, and its change saved, before anything reads the service."""
    wait_until(lambda: in_flight(work.base_url) == 0, every=0.02,
               what=lambda: f"{work.root}: the emulator still handles {in_flight(work.base_url)} request(s)")


def test_an_apply_killed_at_random_moments_always_recovers_without_duplicates(tmp_path: Path) -> None:
    started = time.monotonic()
    full = _calibrate(Workdir(tmp_path / "calibration"))
    rng = random.Random(SEED)
    delays = [rng.uniform(0.0, 0.9) * full for _ in range(RUNS)]
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = list(pool.map(lambda i: _crash_run(tmp_path / f"run-{i:02d}", delays[i]), range(RUNS)))
    elapsed = time.monotonic() - started

    imports = Counter(address for run in runs for address in run.imports)
    print(f"\ncrash test: {RUNS} runs, {sum(r.killed for r in runs)} killed mid-apply (holding the lock), "
          f"{sum(r.attempts == 1 for r in runs)} of them at the first try "
          f"(an apply holds the lock {full:.2f} s; kills 0-{0.9 * full:.2f} s after it is taken, seed {SEED}); "
          f"{sum(r.lock_left for r in runs)} left the lock (taken over by the next apply); "
          f"{sum(bool(r.imports) for r in runs)} needed 'reconciler import' ({dict(imports)}), "
          f"{sum(bool(r.asset_conflicts) for r in runs)} of them for a file asset whose creation was cut off; "
          f"{sum(bool(r.asset_doubts) for r in runs)} had a link/embed in doubt, resolved by hand "
          f"({[d for r in runs for d in r.asset_doubts]}); "
          f"{sum(r.attempts - 1 for r in runs)} attempt(s) repeated because the apply ended before the kill; "
          f"{elapsed:.1f} s in all, {max(r.seconds for r in runs):.1f} s for the longest run")
    assert len(runs) == RUNS and all(run.killed for run in runs)


def _calibrate(work: Workdir) -> float:
    """The wall time one whole apply holds the lock, from the moment it is seen taken to the
    apply's exit: kills are spread over it."""
    with emulator_serving(work):
        apply = start_apply(work)
        assert wait_for_the_lock(work, apply), f"{work.root}: the lock was never seen: {said(apply, *work.logs())}"
        taken = time.monotonic()
        code = wait_for_exit(apply, *work.logs())
        took = time.monotonic() - taken
    assert code == 0, said(apply, *work.logs())
    return took


def _crash_run(root: Path, delay: float, make: type[Workdir] = Workdir) -> Run:
    """One run: again, on a fresh emulator and sooner, while the apply had
    finished before the kill (a machine faster than the calibration); the
    last try kills it as soon as it holds the lock."""
    delays = [delay, delay / 2, delay / 4, 0.0]
    for attempt, delay in enumerate(delays):
        run = _kill_and_recover(root / f"attempt-{attempt}", delay, make)
        if run.killed:
            run.attempts = attempt + 1
            return run
    raise AssertionError(f"{root}: the apply had finished before every kill (after {delays} s)")


def _kill_and_recover(root: Path, delay: float, make: type[Workdir] = Workdir) -> Run:
    began = time.monotonic()
    work = make(root)
    run = Run(delay=delay)
    with emulator_serving(work):
        apply = start_apply(work)
        try:
            if wait_for_the_lock(work, apply):
                time.sleep(delay)  # the seeded random moment, counted from the lock taken
                # Frozen, then killed: what it holds while frozen is what the kill finds.
                apply.send_signal(signal.SIGSTOP)
                run.killed = apply.poll() is None and work.locked_by(apply.pid)
        finally:
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
    wait_until_the_emulator_is_idle(work)
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