"""The same slice over real HTTP: the emulator served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.commands.apply import apply as apply_command
from reconciler.commands.plan import plan as plan_command
from reconciler.emulator import Emulator
from reconciler.service import Service
from tests.e2e.conftest import QUICKSTART, TOKEN


def test_plan_and_apply_over_loopback_http(served: tuple[str, Emulator], tmp_path: Path) -> None:
    base_url, emulator = served
    assert base_url.startswith("http://127.0.0.1:")
    service = Service(base_url=base_url, env={"RECONCILER_TOKEN": TOKEN})
    state = tmp_path / "state.json"
    first = plan_command(QUICKSTART, service=service, state_path=state)
    assert first.summary.delete == 1
    apply_command(QUICKSTART, service=service, state_path=state, targets=(), max_removals=None, plan_file=None,
                   confirm=lambda _text: True, color=False, progress=lambda _m: None)
    assert not plan_command(QUICKSTART, service=service, state_path=state).has_changes
    assert emulator.request_count(method="POST") == 2


def test_base_url_with_v1_segment_works_too(served: tuple[str, Emulator], tmp_path: Path) -> None:
    base_url, _ = served
    service = Service(base_url=base_url + "/v1/", env={"RECONCILER_TOKEN": TOKEN})
    assert plan_command(QUICKSTART, service=service, state_path=tmp_path / "s.json").has_changes


def test_a_slow_answer_is_announced_while_waiting(served: tuple[str, Emulator]) -> None:
    from reconciler.api.client import WorkspaceClient
    from reconciler.api.connection import make_http_client

    base_url, emulator = served
    emulator.faults.inject("GET", "^/v1/workspaces$", kind="latency", seconds=0.6)
    notices: list[str] = []
    with make_http_client(base_url, TOKEN) as http:
        client = WorkspaceClient(http, on_slow=notices.append, slow_after=0.1)
        assert [ws.id for ws in client.list_workspaces()]
    assert notices == ["Still waiting for the service to answer GET /workspaces after 0.1 s "
                       "(it gives up after 30 s; --timeout changes that)."]


def test_a_read_timeout_names_the_call(served: tuple[str, Emulator], tmp_path: Path) -> None:
    from reconciler.api.errors import ConnectionFailed

    base_url, emulator = served
    emulator.faults.inject("GET", "^/v1/workspaces$", kind="latency", seconds=1.0, times=None)
    service = Service(base_url=base_url, env={"RECONCILER_TOKEN": TOKEN}, timeout=0.2, retries=0)
    with pytest.raises(ConnectionFailed) as failed:
        plan_command(QUICKSTART, service=service, state_path=tmp_path / "s.json")
    assert failed.value.call == "GET /workspaces" and "ReadTimeout" in str(failed.value)


def test_a_token_file_others_can_read_gets_a_warning(served: tuple[str, Emulator], tmp_path: Path) -> None:
    base_url, _ = served
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    notices: list[str] = []
    for mode in (0o644, 0o600):
        token_file.chmod(mode)
        service = Service(base_url=base_url, token_file=token_file, env={}, notice=notices.append)
        plan_command(QUICKSTART, service=service, state_path=tmp_path / "s.json")
    (warning,) = notices
    assert f"the token file {token_file} can be read by other users" in warning and "-rw-r--r--" in warning
    assert TOKEN not in warning
