"""Kill -9 an apply at every step boundary, deterministically, with the state in a file and in PostgreSQL.

The plan (the issue's repro): two workspaces connected to a group, one created from a template, four
assets.  The emulator is served over HTTP from the test process; a wrapper around its ``handle`` counts
the calls that change something (all but GET) and, at call N, kills the ``reconciler apply`` child
(SIGKILL, reaped) either *before* the service makes it (the request is dropped unserved) or *after* the
service made it and before the answer leaves (the answer dies with the process).  A first, whole apply
counts the calls; then every call is a kill point, both ways.

After each kill, as a pipeline would: one more ``reconciler apply``, then ``reconciler plan``, which must
say "No changes.".  Each run spends exactly one credit, makes no workspace or asset twice, and leaves no
intent open; when the kill fell after the creation was made, the second apply says what it adopted.

The one place a person is still needed is the API's, not the tool's: an asset whose creation was made
and whose answer died with the process (the API cannot list assets).  There the second apply does
everything else, names the asset under "needs a person" (a link or embed) or stops at it (a file,
whose second creation the service refuses), and the test settles it as a person would, with the
import of the asset found in the service.
"""

from __future__ import annotations

import json
import multiprocessing
from multiprocessing import connection
import os
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import ScaledClock
from reconciler.emulator import Emulator
from reconciler.emulator.faults import ConnectionDropped
from reconciler.emulator.server import start_background_server
from reconciler.state import LockHolder, State, load_state, lock_path
from reconciler.state.backend import open_backend
from tests.e2e.conftest import ROOT, TOKEN, run_cli
from tests.e2e.test_crash import ASSET_NAMES, KICKOFF
from reconciler.vocabulary import DEFAULT_LIMITS
from tests.pg_cluster import Cluster

GROUPS = """version: 1
groups:
  customer-inc:
    homepage: ws_home
    workspaces:
      welcome: {id: ws_welcome}
      quarterly-review: {id: ws_qbr}
      kickoff:
        template: tpl_kickoff
        name: Customer Inc – Kickoff
"""
KICKOFF_ADDRESS = "group.customer-inc.workspace.kickoff"
CREATION = "POST /v1/workspaces/ws_home/connected-workspaces (templateId)"  # a connect has no templateId
ASSET_CREATION = "POST /v1/assets"  # followed by (type "name")
ASSET_ADDRESS = {"Pricing 2027": "asset.pricing-sheet", "Onboarding checklist": "asset.onboarding-checklist",
                 "Customer Inc website": "asset.website", "Book a call": "asset.booking"}


# The emulator's clock runs this much faster, and the client paces itself as much faster: the
# creation class's 30 a minute would otherwise cost seconds a run.
TIME_SCALE = 60
PACE = [f"--rate-limit={name}={limit * TIME_SCALE}" for name, limit in DEFAULT_LIMITS.items()]


class Killer:
    """In front of one run's emulator: counts the calls that change something and kills the apply at one.

    One server serves every run (a server per run cost seconds to stop); ``serve`` points it at the
    run's own emulator."""

    def __init__(self) -> None:
        self.emulator: Emulator | None = None
        self.calls: list[str] = []
        self.child: BaseProcess | None = None
        self.at: int | None = None  # 1-based: the call at which to kill
        self.after = False
        self.killed = threading.Event()

    def serve(self, emulator: Emulator) -> None:
        self.emulator, self.calls, self.child, self.at = emulator, [], None, None
        self.killed.clear()

    def arm(self, child: BaseProcess | None, at: int | None, *, after: bool) -> None:
        self.child, self.at, self.after = child, at, after

    def handle(self, method: str, path: str, query: Sequence[tuple[str, str]], headers: Mapping[str, str],
               body: bytes, **options: Any) -> Any:
        assert self.emulator is not None
        if method.upper() == "GET" or self.child is None:
            return self.emulator.handle(method, path, query, headers, body, **options)
        self.calls.append(_label(method, path, body))
        if len(self.calls) != self.at:
            return self.emulator.handle(method, path, query, headers, body, **options)
        if not self.after:
            self._kill()
            raise ConnectionDropped(method, path, committed=False)  # never made
        answer = self.emulator.handle(method, path, query, headers, body, **options)
        self._kill()  # made in the service; the answer goes to nobody
        return answer

    def _kill(self) -> None:
        assert self.child is not None
        self.child.kill()  # SIGKILL
        # Dead and reaped before the answer leaves: the sentinel is readable once its parent (the
        # fork server) reaped it; only waited on here, as the test's own join reads it.
        connection.wait([self.child.sentinel])
        self.child = None
        self.killed.set()


def _label(method: str, path: str, body: bytes) -> str:
    """``POST /v1/assets (link "Customer Inc website")``; a creation from a template says so."""
    label = f"{method.upper()} {path}"
    if path == "/v1/assets":
        sent = json.loads(body)
        return f"{label} ({sent['type']} \"{sent['name']}\")"
    return f"{label} (templateId)" if b"templateId" in body else label


# The apply runs in a process of its own, killed with SIGKILL; forked from a server that has
# reconciler imported already, as starting Python afresh cost seconds a run on a busy machine.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["reconciler.cli", "reconciler.commands.apply", "reconciler.state.postgres"])


def _apply_in_child(argv: list[str], env: dict[str, str]) -> None:
    """``reconciler apply`` in the forked process: its output thrown away, its exit code kept."""
    os.environ.clear()
    os.environ.update(env)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    from reconciler.cli import main

    try:
        main(argv)
    except SystemExit as exc:
        os._exit(int(exc.code or 0))
    os._exit(0)


@dataclass
class Setup:
    """Where a run keeps its state: a fresh file, or a fresh key in the PostgreSQL cluster."""

    state: Callable[[Path], str]
    load: Callable[[str], State | None]
    # A lock file outlives a kill -9 (by design: it names the dead holder, and only force-unlock
    # breaks it); PostgreSQL's lock goes with the killed session.
    lock_file: bool = False


def _force_unlock(state: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Break the dead apply's lock with the ID the lock file names, as its message says."""
    holder = LockHolder.read(lock_path(Path(state)))
    if holder is None:
        return
    code, out, err = run_cli(["force-unlock", str(holder.id), "--state", state], capsys)
    assert code == 0, out + err


def _load_file(address: str) -> State | None:
    return load_state(Path(address)) if Path(address).exists() else None


def _load_pg(address: str) -> State | None:
    store = open_backend(address)
    try:
        return store.load() if store.exists() else None
    finally:
        store.close()


class _Front(Emulator):
    """What the server holds: every request goes to the killer, which passes it to the run's emulator."""

    def __init__(self, killer: Killer) -> None:  # noqa: D107 - no store of its own
        self.killer = killer

    def handle(self, method: str, path: str, query: Sequence[tuple[str, str]], headers: Mapping[str, str],
               body: bytes, *, base_url: str | None = None) -> Any:
        return self.killer.handle(method, path, query, headers, body, base_url=base_url)


@contextmanager
def _served(killer: Killer) -> Iterator[str]:
    base_url, stop = start_background_server(_Front(killer))
    try:
        yield base_url
    finally:
        stop()


def _project(root: Path) -> Path:
    project = root / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", project)
    (project / "workspaces.yaml").unlink()
    (project / "groups.yaml").write_text(GROUPS, encoding="utf-8")
    return project


@dataclass
class Run:
    """One apply, killed at ``at`` (None: not killed), against its own emulator and state."""

    root: Path
    setup: Setup
    killer: Killer
    at: int | None = None
    after: bool = False

    def __post_init__(self) -> None:
        self.project = _project(self.root)
        self.emulator = Emulator.from_seed_file(self.project / "seed.yaml", clock=ScaledClock(TIME_SCALE))
        self.killer.serve(self.emulator)
        self.state = self.setup.state(self.root)
        self.credits = self.company.credits

    @property
    def company(self) -> Any:
        return self.emulator.store.companies["acme"]

    def args(self, command: str, url: str) -> list[str]:
        return [command, str(self.project), "--base-url", url, "--state", self.state, *PACE]

    def killed_apply(self, url: str) -> None:
        child = FORKS.Process(target=_apply_in_child, args=([*self.args("apply", url), "--auto-approve"],
                                                            dict(os.environ)))
        self.killer.arm(child, self.at, after=self.after)
        child.start()
        child.join(timeout=120)
        code = child.exitcode  # None: still running after 120 s, then killed here (its output is thrown away)
        if code is None:
            child.kill()
            child.join()
        if self.at is None:
            assert code == 0, f"{self.root}: the whole apply, not killed, succeeds (exit code {code})"
        else:
            assert self.killer.killed.wait(120), f"{self.root}: never killed (call {self.at} not reached; exit {code})"
        self.killer.arm(None, None, after=False)  # disarmed: calls pass through


def _every_boundary(tmp_path: Path, setup: Setup, capsys: pytest.CaptureFixture[str]) -> None:
    killer = Killer()
    with _served(killer) as url:
        whole = Run(tmp_path / "whole", setup, killer)
        whole.killed_apply(url)  # not killed: the calls it makes are the kill points
        calls = list(killer.calls)
        assert CREATION in calls and sum(c.startswith(ASSET_CREATION) for c in calls) == len(ASSET_NAMES), calls
        adopted = []
        for at, call in enumerate(calls, start=1):
            for after in (False, True):
                run = Run(tmp_path / f"{at:02d}-{'after' if after else 'before'}", setup, killer, at, after)
                run.killed_apply(url)
                if setup.lock_file:
                    _force_unlock(run.state, capsys)
                if _recover(run, url, call, capsys):
                    adopted.append(at)
                code, out, err = run_cli([*run.args("plan", url), "--detailed-exitcode"], capsys)
                assert code == 0 and "No changes." in out, f"{run.root}: {out}{err}"
                _check_service(run)
    assert adopted == [calls.index(CREATION) + 1], "adopted exactly when the kill fell after the creation was made"


def _asks_a_person(call: str, after: bool) -> bool:
    """A link or embed whose creation may have been sent (either way); a file asset made and not recorded."""
    if not call.startswith(ASSET_CREATION):
        return False
    return after or call.startswith((f"{ASSET_CREATION} (link", f"{ASSET_CREATION} (embed"))


def _recover(run: Run, url: str, call: str, capsys: pytest.CaptureFixture[str]) -> bool:
    """One more apply, with no person; whether it adopted the kickoff.  (An asset creation in flight
    is the API's exception: settled as a person would, then one more apply.)"""
    code, out, err = run_cli([*run.args("apply", url), "--auto-approve"], capsys)
    if _asks_a_person(call, run.after):
        name = call.split('"')[1]
        assert code == 1 and f"{ASSET_ADDRESS[name]} (" in err, f"{run.root}: {out}{err}"
        _settle_asset(run, url, name, capsys)
        code, out, err = run_cli([*run.args("apply", url), "--auto-approve"], capsys)
    assert code == 0, f"{run.root}: killed at call {run.at} ({call}, {'after' if run.after else 'before'}):\n{out}{err}"
    kickoff = next(w.id for w in run.company.workspaces if w.name == KICKOFF)
    said = f"{KICKOFF_ADDRESS}: adopted {kickoff}: created by the interrupted apply of "
    if run.after and call == CREATION:
        assert said in out + err, out + err
        return True
    assert "adopted" not in out + err, out + err
    return False


def _settle_asset(run: Run, url: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """As a person would: import the asset found in the web app (here: the emulator), or forget the doubt."""
    found = [a.id for a in run.company.assets if a.name == name]
    command = (["import", ASSET_ADDRESS[name], found[0]] if found else ["state", "rm", ASSET_ADDRESS[name]])
    service = ["--base-url", url] if command[0] == "import" else []  # an asset's import checks nothing live
    code, out, err = run_cli([*command, str(run.project), *service, "--state", run.state], capsys)
    assert code == 0, out + err


def _check_service(run: Run) -> None:
    """One credit spent, every workspace and asset once, no intent left open."""
    names = Counter(w.name for w in run.company.workspaces)
    assert names[KICKOFF] == 1 and all(n == 1 for n in names.values()), f"{run.root}: {names}"
    assert run.company.credits == run.credits - 1, f"{run.root}: exactly one credit per creation"
    assert Counter(a.name for a in run.company.assets) == Counter(ASSET_NAMES), f"{run.root}"
    state = run.setup.load(run.state)
    assert state is not None and not any(r.intent for r in state.resources.values()), f"{run.root}"


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("RECONCILER_BASE_URL", raising=False)


@pytest.mark.usefixtures("token")
def test_an_apply_killed_at_every_step_boundary_converges_with_one_more_apply(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _every_boundary(tmp_path, Setup(state=lambda root: str(root / "state.json"), load=_load_file, lock_file=True),
                    capsys)


@pytest.mark.usefixtures("token")
def test_an_apply_killed_at_every_step_boundary_converges_with_the_state_in_postgresql(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pg_cluster: Cluster, pg_state: str) -> None:
    _every_boundary(tmp_path, Setup(state=lambda _root: pg_cluster.url(), load=_load_pg), capsys)
