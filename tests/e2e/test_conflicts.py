"""Apply never overwrites a change someone made after the plan."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from reconciler.apply import apply_plan
from reconciler.emulator import emulator_transport
from reconciler.errors import ApplyError
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State
from tests.e2e.conftest import QUICKSTART, TOKEN


def _plan(client):
    desired = load_desired(QUICKSTART)
    return make_plan(desired, fetch_live(client, ["ws_home", "ws_portal"], complete=True), State())


def _someone_else_sets(emulator, workspace_id: str, users: list[dict[str, str]]) -> None:
    with httpx.Client(transport=emulator_transport(emulator), base_url="http://x.invalid/v1",
                      headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        http.post(f"/workspaces/{workspace_id}/access", json={"workspaceUsers": users}).raise_for_status()


def test_apply_refuses_when_a_list_changed_since_the_plan(quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    _someone_else_sets(quickstart_emulator, "ws_portal", [{"email": "ops@acme.com", "role": "owner"},
                                                           {"email": "auditor@acme.com", "role": "viewer"}])
    writes_before = quickstart_emulator.request_count(method="POST") + quickstart_emulator.request_count(method="PATCH")
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    message = str(err.value)
    assert "Nothing was changed" in message
    assert f"workspace.partner-portal ({QUICKSTART / 'manifest.yaml'}:23): user auditor@acme.com was absent, now viewer" in message
    writes_after = quickstart_emulator.request_count(method="POST") + quickstart_emulator.request_count(method="PATCH")
    assert writes_after == writes_before
    assert not (tmp_path / "s.json").exists()


def test_the_other_change_survives_the_refusal(quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    _someone_else_sets(quickstart_emulator, "ws_portal", [{"email": "ops@acme.com", "role": "owner"},
                                                           {"email": "auditor@acme.com", "role": "viewer"}])
    with pytest.raises(ApplyError):
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    live = fetch_live(quickstart_client, ["ws_portal", "ws_home"])
    assert "auditor@acme.com" in live.workspaces["ws_portal"].users
    assert "old.contractor@agency.io" in live.workspaces["ws_home"].users


class _SecondCheckout(httpx.BaseTransport):
    """The wire to the emulator, with a second machine that writes the portal's
    list right after ours (through the API, as another apply would)."""

    def __init__(self, emulator, users: list[dict[str, str]] | None = None) -> None:  # type: ignore[no-untyped-def]
        self.inner = emulator_transport(emulator)
        self.emulator = emulator
        self.users = users or [{"email": "ops@acme.com", "role": "owner"}, {"email": "temp@acme.com", "role": "editor"}]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/ws_portal/access"):
            _someone_else_sets(self.emulator, "ws_portal", self.users)
        return response


def test_a_list_overwritten_during_the_apply_is_reported_by_the_read_back(tmp_path: Path) -> None:
    from reconciler.api.client import WorkspaceClient
    from reconciler.api.connection import make_http_client
    from reconciler.clock import VirtualClock
    from reconciler.emulator import Emulator

    clock = VirtualClock()
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml", clock=clock)
    http = make_http_client("http://emulator.invalid", TOKEN, transport=_SecondCheckout(emulator))
    client = WorkspaceClient(http, clock=clock)
    plan = _plan(client)
    with pytest.raises(ApplyError) as lost:
        apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json")
    message = str(lost.value)
    assert "reading the lists back shows access other than the plan predicted" in message
    assert "ws_portal: predicted lee@partner.io commenter, service shows it absent" in message
    assert "ws_home" not in message


def test_the_refusal_says_each_entry_that_moved_users_then_domains(quickstart_client, quickstart_emulator,
                                                                    tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    with httpx.Client(transport=emulator_transport(quickstart_emulator), base_url="http://x.invalid/v1",
                      headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        http.post("/workspaces/ws_portal/access", json={
            "workspaceUsers": [{"email": "ops@acme.com", "role": "owner"}],
            "workspaceDomains": [{"domain": "acme.com", "role": "viewer"}]}).raise_for_status()
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    assert str(err.value) == (
        "Nothing was changed: access in the service changed since the plan was made, and applying it would undo "
        "someone else's change:\n"
        f"  workspace.partner-portal ({QUICKSTART / 'manifest.yaml'}:23): user temp@acme.com was editor, now absent; "
        "domain acme.com was absent, now viewer.\n"
        "Run 'reconciler plan' again and review the new plan.")


def test_the_read_back_says_each_entry_other_than_predicted(tmp_path: Path) -> None:
    from reconciler.api.client import WorkspaceClient
    from reconciler.api.connection import make_http_client
    from reconciler.clock import VirtualClock
    from reconciler.emulator import Emulator

    clock = VirtualClock()
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml", clock=clock)
    second = _SecondCheckout(emulator, [{"email": "ops@acme.com", "role": "owner"},
                                        {"email": "temp@acme.com", "role": "viewer"},
                                        {"email": "auditor@acme.com", "role": "viewer"}])
    client = WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN, transport=second), clock=clock)
    with pytest.raises(ApplyError) as lost:
        apply_plan(_plan(client), client=client, state=State(), state_path=tmp_path / "s.json")
    assert str(lost.value) == (
        "Apply made every change, but reading the lists back shows access other than the plan predicted (someone "
        "changed them at the same time, or the service did more than its description says):\n"
        "  ws_portal: predicted auditor@acme.com viewer absent, service shows it; predicted lee@partner.io "
        "commenter, service shows it absent; predicted temp@acme.com editor, service shows viewer\n"
        "Run 'reconciler plan' to see the lists as they are now, and run applies one at a time (a CI concurrency "
        "group).")
