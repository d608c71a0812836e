"""End-to-end fixtures: the real client talking to the project's emulator.

The emulator and the client share one VirtualClock, so waiting for a rate
limit window advances the emulator's time too and no test really sleeps.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator, emulator_transport
from reconciler.emulator.server import start_background_server
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.state import load_state

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
TOKEN = "dev-token-acme"


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def quickstart_emulator(clock: VirtualClock) -> Emulator:
    return Emulator.from_seed_file(QUICKSTART / "seed.yaml", clock=clock)


def client_for(emulator: Emulator, clock: VirtualClock, *, token: str = TOKEN, **kwargs: Any) -> WorkspaceClient:
    http = make_http_client("http://emulator.invalid", token, transport=emulator_transport(emulator))
    return WorkspaceClient(http, clock=clock, **kwargs)


@pytest.fixture
def quickstart_client(quickstart_emulator: Emulator, clock: VirtualClock) -> Iterator[WorkspaceClient]:
    client = client_for(quickstart_emulator, clock)
    yield client


def seed_company(workspaces: list[dict[str, Any]], *, token: str = TOKEN) -> dict[str, Any]:
    """A one-company seed in the emulator's seed format (reconciler/emulator/README.md)."""
    return {
        "companies": {
            "acme": {
                "token": token,
                "verified": True,
                "plan": "paid",
                "credits": 100,
                "workspaces": workspaces,
            }
        }
    }


@pytest.fixture
def write_seed(tmp_path: Path) -> Callable[..., Path]:
    def write(seed: dict[str, Any], name: str = "seed.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(seed, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return path

    return write


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    """Run the real entry point in-process; returns (exit code, stdout, stderr)."""
    from reconciler.cli import main

    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def served() -> Iterator[tuple[str, Emulator]]:
    """The quickstart emulator served over real HTTP on 127.0.0.1: (base URL, emulator)."""
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml")
    base_url, stop = start_background_server(emulator)
    try:
        yield base_url, emulator
    finally:
        stop()


@pytest.fixture
def no_ambient_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """No service from the environment: a test names its service itself."""
    for name in ("RECONCILER_BASE_URL", "RECONCILER_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def emu_args(project: Path) -> list[str]:
    """The flags that run a command against the project's own emulator file and seed."""
    return ["--emulator", str(project / "emulator.yaml"), "--seed", str(project / "seed.yaml")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the quickstart, so state files land in a temp dir."""
    dest = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, dest)
    return dest


@dataclass
class EmulatorRig:
    """Manifests in ``root`` (state file beside them) planned and applied by
    the real client against an in-process emulator on a shared virtual clock."""

    emulator: Emulator
    clock: VirtualClock
    root: Path

    @property
    def state_path(self) -> Path:
        return self.root / "reconciler.state.json"

    def client(self, **kwargs: Any) -> WorkspaceClient:
        return client_for(self.emulator, self.clock, **kwargs)

    def plan(self, **kwargs: Any) -> Plan:
        return plan_with_client(self.client(), load_desired(self.root), load_state(self.state_path), **kwargs)

    def apply(self, plan: Plan | None = None, *, wait: bool = False, progress: list[str] | None = None,
              **kwargs: Any) -> Plan:
        plan = plan or self.plan(**kwargs)
        apply_plan(plan, client=self.client(), state=load_state(self.state_path), state_path=self.state_path,
                   wait=wait, progress=progress.append if progress is not None else None)
        return plan

    @property
    def company(self) -> Any:
        return self.emulator.store.companies["acme"]


def onboarding_rig(tmp_path: Path, clock: VirtualClock, cls: type[EmulatorRig] = EmulatorRig) -> Any:
    """A copy of examples/onboarding and an emulator seeded from it."""
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    return cls(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)


@contextmanager
def quickstart_served(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], Emulator]]:
    """A copy of the quickstart at ``root``, its emulator served over loopback
    HTTP with the token in the environment: (connection flags, emulator)."""
    shutil.copytree(QUICKSTART, root)
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml")
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    for name in ("RECONCILER_BASE_URL", "RECONCILER_REQUIRE_STATE", "RECONCILER_STATE", "RECONCILER_EXPECT_DIGEST"):
        monkeypatch.delenv(name, raising=False)
    base_url, stop = start_background_server(emulator)
    try:
        yield ["--base-url", base_url], emulator
    finally:
        stop()
