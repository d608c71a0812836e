"""apply --audit-log: one JSON line per HTTP call, compared with the
emulator's own record of the requests it received (method, path, status),
for the onboarding example: in-process on the virtual clock, with faults,
and through the CLI over real HTTP with a CI environment."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.apply.audit import AuditLog
from reconciler.clock import VirtualClock
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator, emulator_transport
from reconciler.emulator.server import start_background_server
from reconciler.errors import ApplyError
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, TOKEN, client_for, run_cli

ONBOARDING = ROOT / "examples" / "onboarding"
CI_VARIABLES = ("GITHUB_SHA", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_HEAD_REF", "GITHUB_EVENT_PATH",
                "CI_COMMIT_SHA", "CI_COMMIT_REF_NAME", "CI_MERGE_REQUEST_IID")


@dataclass
class Rig:
    emulator: Emulator
    clock: VirtualClock
    root: Path

    @property
    def state_path(self) -> Path:
        return self.root / "reconciler.state.json"

    @property
    def log_path(self) -> Path:
        return self.root / "audit.jsonl"

    def plan(self) -> Plan:
        return plan_with_client(client_for(self.emulator, self.clock), load_desired(self.root),
                                load_state(self.state_path))

    def apply(self, plan: Plan, *, retries: int = 3) -> None:
        """Apply ``plan`` with an audit log installed on the client, as the CLI does."""
        with AuditLog(self.log_path, env={}) as audit:
            http = make_http_client("http://emulator.invalid", TOKEN, transport=emulator_transport(self.emulator))
            audit.install(http)
            with http:
                apply_plan(plan, client=WorkspaceClient(http, clock=self.clock, max_attempts=retries + 1),
                           state=load_state(self.state_path), state_path=self.state_path,
                           on_change=audit.follow(plan))

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines()]

    def seen(self, start: int = 0) -> list[tuple[str, str, int | None]]:
        """The emulator's record from ``start`` on; a dropped connection (0) had no answer (None)."""
        return [(r.method, r.path, r.status or None) for r in self.emulator.requests[start:]]


def logged(lines: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    return [(line["method"], line["path"], line["status"]) for line in lines]


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    root = tmp_path / "onboarding"
    shutil.copytree(ONBOARDING, root)
    return Rig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)


def test_every_call_of_the_apply_is_logged_as_the_emulator_saw_it(rig: Rig) -> None:
    plan = rig.plan()
    start = len(rig.emulator.requests)
    rig.apply(plan)
    lines = rig.lines()
    assert logged(lines) == rig.seen(start)
    assert len(lines) == plan.cost.total_calls


def test_each_line_names_the_change_it_belongs_to_in_plan_order(rig: Rig) -> None:
    plan = rig.plan()
    rig.apply(plan)
    lines = rig.lines()
    # The re-read before the first write and the read-back after the last belong to no change.
    assert lines[0]["address"] is None and lines[-1]["address"] is None
    addresses = [line["address"] for line in lines if line["address"] is not None]
    in_order = [a for i, a in enumerate(addresses) if i == 0 or addresses[i - 1] != a]
    assert in_order == [c.address for c in plan.changes if c.calls]


def test_the_privilege_class_is_the_access_change_s_or_the_change_kind(rig: Rig) -> None:
    plan = rig.plan()
    rig.apply(plan)
    by_address = {line["address"]: line["privilege"] for line in rig.lines()}
    changes = {c.address: c for c in plan.changes}
    portal = changes["workspace.partner-portal"]
    classes = {getattr(e, "privilege", None) for e in portal.entries} - {None} or {"access"}
    assert set(by_address["workspace.partner-portal"]) == classes
    assert by_address["group.customer-inc.workspace.welcome"] == ["connect"]
    assert by_address["asset.website"] == ["asset"]
    # The group's new lists ride on the first creation: its line carries their classes too.
    kickoff = by_address["group.customer-inc.workspace.kickoff"]
    assert kickoff[0] == "create" and len(kickoff) > 1


def test_a_failed_call_and_its_retry_are_both_logged_with_their_status(rig: Rig) -> None:
    plan = rig.plan()
    start = len(rig.emulator.requests)
    rig.emulator.faults.inject("PATCH", "/workspace-sections/", status=500, times=1)
    rig.apply(plan)
    lines = rig.lines()
    assert logged(lines) == rig.seen(start)
    patches = [line for line in lines if line["method"] == "PATCH" and "/workspace-sections/" in line["path"]]
    assert [p["status"] for p in patches][:2] == [500, 200]
    assert patches[0]["path"] == patches[1]["path"] and patches[0]["address"] == patches[1]["address"]


def test_the_call_that_stopped_the_apply_is_the_last_line_with_its_status(rig: Rig) -> None:
    plan = rig.plan()
    start = len(rig.emulator.requests)
    rig.emulator.faults.inject("PATCH", "/workspace-sections/", status=500, times=None)
    with pytest.raises(ApplyError):
        rig.apply(plan, retries=0)
    lines = rig.lines()
    assert logged(lines) == rig.seen(start)
    assert lines[-1]["status"] == 500 and lines[-1]["method"] == "PATCH"
    assert lines[-1]["address"] == next(c.address for c in plan.changes if c.kind == "section")


def test_a_call_without_an_answer_is_logged_with_status_null(rig: Rig) -> None:
    plan = rig.plan()
    start = len(rig.emulator.requests)
    rig.emulator.faults.inject("PATCH", "/workspace-pages/", kind="drop", times=1)
    rig.apply(plan)
    lines = rig.lines()
    assert logged(lines) == rig.seen(start)
    assert any(line["status"] is None and line["method"] == "PATCH" for line in lines)


def test_a_lost_last_answer_is_written_when_the_log_closes(rig: Rig) -> None:
    plan = rig.plan()
    start = len(rig.emulator.requests)
    rig.emulator.faults.inject("PATCH", "/workspace-pages/", kind="drop", times=None)
    with pytest.raises(ApplyError):
        rig.apply(plan, retries=0)
    lines = rig.lines()
    assert logged(lines) == rig.seen(start)
    assert lines[-1]["status"] is None and lines[-1]["method"] == "PATCH"


# -- through the CLI, over real HTTP --------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Emulator, Path]]:
    root = tmp_path / "onboarding"
    shutil.copytree(ONBOARDING, root)
    emulator = Emulator.from_seed_file(root / "seed.yaml")
    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    base_url, stop = start_background_server(emulator)
    try:
        yield base_url, emulator, root
    finally:
        stop()


def test_the_cli_logs_every_call_of_the_command_with_the_pull_request(served, tmp_path: Path, capsys,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    base_url, emulator, root = served
    monkeypatch.setenv("GITHUB_SHA", "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c")
    monkeypatch.setenv("GITHUB_REF", "refs/pull/42/merge")
    monkeypatch.setenv("GITHUB_REF_NAME", "42/merge")
    monkeypatch.setenv("GITHUB_HEAD_REF", "onboard-customer-inc")
    log = tmp_path / "audit.jsonl"
    code, _, err = run_cli(["apply", str(root), "--base-url", base_url, "--auto-approve", "--audit-log", str(log)],
                           capsys)
    assert code == 0, err
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    # The plan's reads, the re-reads and every write: exactly what the emulator received.
    assert logged(lines) == [(r.method, r.path, r.status) for r in emulator.requests]
    for line in lines:
        assert (line["commit"], line["branch"], line["pull_request"]) == (
            "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", "onboard-customer-inc", 42)
        assert "?" not in line["path"] and not line["path"].startswith("http")


def test_neither_the_token_nor_an_upload_signature_is_in_the_log(served, tmp_path: Path, capsys) -> None:
    base_url, emulator, root = served
    log = tmp_path / "audit.jsonl"
    code, _, err = run_cli(["apply", str(root), "--base-url", base_url, "--auto-approve", "--audit-log", str(log)],
                           capsys)
    assert code == 0, err
    text = log.read_text(encoding="utf-8")
    upload_tokens = [f.upload_token for f in emulator.store.companies["acme"].files]
    assert len(upload_tokens) == 2
    assert text.count('"PUT"') == 2 and '"/uploads/' in text
    assert TOKEN not in text
    for secret in upload_tokens:
        assert secret not in text


def test_an_audit_log_that_cannot_be_opened_stops_before_any_call(served, tmp_path: Path, capsys) -> None:
    base_url, emulator, root = served
    log = tmp_path / "missing-directory" / "audit.jsonl"
    code, _, err = run_cli(["apply", str(root), "--base-url", base_url, "--auto-approve", "--audit-log", str(log)],
                           capsys)
    assert code == 1 and f"Cannot open the audit log {log}" in err
    assert emulator.requests == []
