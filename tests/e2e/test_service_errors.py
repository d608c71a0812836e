"""Service errors and dropped connections: a clear message, exit 1, nothing lost.

The library-level tests run the real client on the in-process emulator with a
shared VirtualClock, so retries and rate-limit waits cost no wall time and
their counts are exact.  The CLI-level tests serve the emulator on 127.0.0.1
and check what a user sees: exit code 1, the address and the call named, no
traceback, no token.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.api.client import WorkspaceClient
from reconciler.api.errors import ConnectionFailed, ServerError
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import Plan, make_plan
from reconciler.state import State, load_state
from tests.e2e.conftest import QUICKSTART, TOKEN, client_for, run_cli, seed_company

ACCESS_POST = r"/workspaces/[^/]+/access$"
PORTAL_POST = r"/workspaces/ws_portal/access$"
LISTING = r"^/v1/workspaces$"
SECRET = TOKEN  # the quickstart company's token: it must never be printed


def _plan(client: WorkspaceClient, state: State | None = None) -> Plan:
    desired = load_desired(QUICKSTART)
    return make_plan(desired, fetch_live(client, [wid for _, wid, _ in desired.access_lists()], complete=True), state or State())


def _access(client: WorkspaceClient) -> dict[str, dict[str, dict[str, str]]]:
    live = fetch_live(client, ["ws_home", "ws_portal"])
    return {wid: ws.access_fingerprint() for wid, ws in sorted(live.workspaces.items())}


# --- library level: retries, partial applies, state ------------------------------------------


def test_a_500_on_the_listing_is_retried_and_the_plan_is_made(quickstart_client, quickstart_emulator) -> None:
    fault = quickstart_emulator.faults.inject("GET", LISTING, status=500, times=2)
    plan = _plan(quickstart_client)
    assert fault.fired == 2
    assert quickstart_client.stats.retries == 2
    assert len(plan.changes) == 2


def test_a_persistent_500_on_a_post_stops_apply_naming_the_address_and_the_call(
        quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    before = _access(quickstart_client)
    quickstart_emulator.faults.inject("POST", ACCESS_POST, status=500, times=None)
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    message = str(err.value)
    assert "Apply stopped at group.acme-onboarding" in message
    assert "500" in message and "POST /workspaces/ws_home/access" in message
    assert "None of the plan's changes was made before this one" in message
    assert "This change may or may not have been made (its answer was lost)" in message
    assert isinstance(err.value.__cause__, ServerError) and err.value.__cause__.attempts == 4
    assert _access(quickstart_client) == before


def test_a_failure_on_the_second_list_leaves_the_first_applied_and_recorded(
        quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    state_path = tmp_path / "s.json"
    quickstart_emulator.faults.inject("POST", PORTAL_POST, status=500, times=None)
    with pytest.raises(ApplyError, match="1 of the plan's 2 changes was made before this"):
        apply_plan(plan, client=quickstart_client, state=State(), state_path=state_path)
    state = load_state(state_path)
    assert set(state.resources) == {"group.acme-onboarding"}
    again = _plan(quickstart_client, state)
    assert [c.address for c in again.changes] == ["workspace.partner-portal"]


def test_the_rest_is_applied_by_the_next_run_after_a_failure(quickstart_client, quickstart_emulator,
                                                             tmp_path: Path) -> None:
    state_path = tmp_path / "s.json"
    quickstart_emulator.faults.inject("POST", PORTAL_POST, status=500, times=4)
    with pytest.raises(ApplyError):
        apply_plan(_plan(quickstart_client), client=quickstart_client, state=State(), state_path=state_path)
    second = _plan(quickstart_client, load_state(state_path))
    apply_plan(second, client=quickstart_client, state=load_state(state_path), state_path=state_path)
    assert not _plan(quickstart_client, load_state(state_path)).has_changes


def test_a_connection_dropped_after_the_change_is_retried_and_converges(
        quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    state_path = tmp_path / "s.json"
    fault = quickstart_emulator.faults.inject("POST", ACCESS_POST, kind="after_commit", times=2)
    result = apply_plan(_plan(quickstart_client), client=quickstart_client, state=State(), state_path=state_path)
    assert fault.fired == 2
    assert result.changed == 2
    assert not _plan(quickstart_client, load_state(state_path)).has_changes


def test_a_connection_that_never_answers_is_a_connection_error_naming_the_call(
        quickstart_client, quickstart_emulator) -> None:
    quickstart_emulator.faults.inject("GET", LISTING, kind="drop", times=None)
    with pytest.raises(ConnectionFailed) as err:
        _plan(quickstart_client)
    assert "GET /workspaces" in str(err.value)
    assert err.value.attempts == 4


def test_a_stricter_service_slows_the_client_through_its_headers_before_any_429(
        clock: VirtualClock, tmp_path: Path) -> None:
    # The service allows 2 requests a minute; the client believes 120.
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml", clock=clock, rate_limits={"default": 2})
    client = client_for(emulator, clock)
    plan = _plan(client)                                                             # 1 listing
    apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json")  # refresh, 2 POSTs, read-back
    assert client.stats.rate_limited == 0
    assert emulator.request_count() == 5
    assert client.stats.waited_seconds == 120  # X-RateLimit-Remaining: 0 after the 2nd and the 4th call


def test_a_429_is_waited_out_and_the_call_sent_again(quickstart_client, quickstart_emulator,
                                                     tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    quickstart_emulator.faults.inject("POST", PORTAL_POST, status=429, times=1)
    result = apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    assert result.changed == 2
    assert quickstart_client.stats.rate_limited == 1
    assert quickstart_emulator.request_count(method="POST") == 3
    assert quickstart_client.stats.waited_seconds == 60  # no Retry-After: one whole window


# --- CLI level over real HTTP: what the user sees --------------------------------------------


@pytest.fixture
def cli_env(served: tuple[str, Emulator], monkeypatch: pytest.MonkeyPatch) -> Emulator:
    base_url, emulator = served
    monkeypatch.setenv("RECONCILER_BASE_URL", base_url)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    return emulator


def _writes(emulator: Emulator) -> int:
    return emulator.request_count(method="POST") + emulator.request_count(method="PATCH")


@pytest.mark.parametrize(("status", "code"), [(401, "UNAUTHORIZED"), (403, "FORBIDDEN"), (404, "NOT_FOUND"),
                                              (409, "CONFLICT"), (400, "BAD_REQUEST")])
def test_an_error_answer_to_apply_exits_1_naming_address_and_call(
        cli_env: Emulator, project: Path, capsys, status: int, code: str) -> None:
    cli_env.faults.inject("POST", ACCESS_POST, status=status, times=None)
    code_, out, err = run_cli(["apply", str(project), "--auto-approve"], capsys)
    assert code_ == 1
    assert f"Apply stopped at group.acme-onboarding ({project / 'manifest.yaml'}:" in err
    assert f"{status}" in err and "POST /workspaces/ws_home/access" in err
    assert "Traceback" not in out + err
    assert SECRET not in out + err
    assert _writes(cli_env) == 1  # the refused call, sent once: client errors are not retried


def test_a_persistent_500_exits_1_and_changes_nothing(cli_env: Emulator, project: Path, capsys) -> None:
    cli_env.faults.inject("POST", ACCESS_POST, status=500, times=None)
    code, _, err = run_cli(["apply", str(project), "--auto-approve", "--retries", "1"], capsys)
    assert code == 1
    assert "500" in err and "POST /workspaces/ws_home/access" in err
    assert "repeating the call is safe" in err
    assert "Traceback" not in err
    cli_env.faults.clear()
    code, out, _ = run_cli(["plan", str(project), "--detailed-exitcode"], capsys)
    assert code == 2 and "2 to add, 1 to change, 1 to remove" in out
    assert cli_env.request_count(method="POST") == 2  # the first try and the one retry


def test_a_500_on_the_listing_is_retried_over_http(cli_env: Emulator, project: Path, capsys) -> None:
    cli_env.faults.inject("GET", LISTING, status=503, times=1)
    code, out, _ = run_cli(["plan", str(project), "--detailed-exitcode"], capsys)
    assert code == 2
    assert "1 to remove" in out
    assert cli_env.request_count(method="GET") == 2


def test_a_dropped_connection_on_plan_exits_1_naming_the_call(cli_env: Emulator, project: Path, capsys) -> None:
    cli_env.faults.inject("GET", LISTING, kind="drop", times=None)
    code, out, err = run_cli(["plan", str(project), "--retries", "0"], capsys)
    assert code == 1
    assert "GET /workspaces" in err
    assert "Traceback" not in out + err
    assert cli_env.request_count(method="GET") == 1  # --retries 0


def test_retries_must_be_a_small_whole_number(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project), "--retries", "-1"], capsys)
    assert code == 1
    assert "--retries" in err


def test_a_list_whose_second_role_change_fails_says_which_were_made(clock: VirtualClock, tmp_path: Path) -> None:
    emulator = Emulator.from_seed(seed_company([{"id": "ws_1", "name": "One", "published": True, "users": [
        {"email": "ops@acme.com", "role": "owner"}, {"email": "a@acme.com", "role": "editor"},
        {"email": "b@acme.com", "role": "editor"}]}]), clock=clock)
    client = client_for(emulator, clock)
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("version: 1\nworkspaces:\n  one:\n    id: ws_1\n    access:\n      users:\n"
                        "        - {email: ops@acme.com, role: owner}\n        - {email: a@acme.com, role: viewer}\n"
                        "        - {email: b@acme.com, role: viewer}\n", encoding="utf-8")
    desired = load_desired(manifest)
    plan = make_plan(desired, fetch_live(client, ["ws_1"]), State())
    (change,) = plan.changes
    assert change.strategy == "patch" and len(change.calls) == 2
    b_id = next(e.entry_id for e in change.entries if e.key == "b@acme.com")
    emulator.faults.inject("PATCH", f"/workspace-users/{b_id}$", status=500, times=None)
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json")
    assert ("Of this change, the role changes of user a@acme.com (editor -> viewer) were made before the "
            "failure.") in str(err.value)


def test_a_stop_at_the_first_change_says_what_was_made_what_may_have_been_and_what_was_not(
        quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    quickstart_emulator.faults.inject("POST", ACCESS_POST, status=500, times=None)
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    assert str(err.value) == (
        f"Apply stopped at group.acme-onboarding ({QUICKSTART / 'manifest.yaml'}:11): {err.value.__cause__} None of "
        "the plan's changes was made before this one. This change may or may not have been made (its answer was "
        "lost). The 1 change after it was not attempted. Run 'reconciler plan' to see what remains.")


def test_a_stop_at_the_second_change_says_the_first_is_kept_and_recorded(
        quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client)
    quickstart_emulator.faults.inject("POST", PORTAL_POST, status=500, times=None)
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    assert str(err.value) == (
        f"Apply stopped at workspace.partner-portal ({QUICKSTART / 'manifest.yaml'}:23): {err.value.__cause__} 1 of "
        "the plan's 2 changes was made before this one; the service keeps it and the state records it. This change "
        "may or may not have been made (its answer was lost). No change came after it. Run 'reconciler plan' to see "
        "what remains.")


THREE_LISTS = """
    version: 1
    workspaces:
      a: {id: ws_a, access: {users: [{email: jane@acme.com, role: owner}, {email: x@acme.com, role: viewer}]}}
      b: {id: ws_b, access: {users: [{email: jane@acme.com, role: owner}, {email: x@acme.com, role: viewer}]}}
      c: {id: ws_c, access: {users: [{email: jane@acme.com, role: owner}, {email: x@acme.com, role: viewer}]}}
"""


def test_a_refused_third_change_says_the_two_before_are_kept_and_it_was_not_made(
        write_manifest, clock, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    emulator = Emulator.from_seed(seed_company([{"id": w, "name": w, "published": True,
                                                 "users": [{"email": "jane@acme.com", "role": "owner"}]}
                                                for w in ("ws_a", "ws_b", "ws_c")]), clock=clock)
    client = client_for(emulator, clock)
    path = write_manifest(THREE_LISTS)
    desired = load_desired(path)
    plan = make_plan(desired, fetch_live(client, ["ws_a", "ws_b", "ws_c"]), State())
    emulator.faults.inject("POST", r"/workspaces/ws_c/access$", status=400, times=None)
    with pytest.raises(ApplyError) as err:
        apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json")
    assert str(err.value) == (
        f"Apply stopped at workspace.c ({path}:5): {err.value.__cause__} 2 of the plan's 3 changes were made before "
        "this one; the service keeps them and the state records them. This change was not made. No change came "
        "after it. Run 'reconciler plan' to see what remains.")
