"""``reconciler who`` and ``reconciler audit`` against the emulator: the CLI over
real HTTP on 127.0.0.1, the functions in-process; one read of the company each."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.company.audit import audit
from reconciler.company.build import company_access
from reconciler.company.read import read_live
from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State
from tests.e2e.conftest import TOKEN, client_for, run_cli

MANIFEST = """\
version: 1
policy:
  allowedDomains: [acme.com, customer.com]
  maxRoleOutside: viewer
teams:
  customer-success: [ana@acme.com, bo@acme.com]
rules:
  security-baseline:
    match: {all: true}
    ensure: {users: [{email: security@acme.com, role: viewer}]}
groups:
  customer-inc:
    homepage: ws_home
    access:
      users: [{email: jane@acme.com, role: owner}]
      domains: [{domain: customer.com, role: viewer}]
      teams: [{team: customer-success, role: editor}]
      authoritative: false
"""


def _seed(side_users: list[dict[str, str]]) -> dict[str, Any]:
    return {"companies": {"acme": {
        "token": TOKEN, "verified": True, "plan": "paid", "credits": 10,
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}, {"id": "acc_2", "name": "Partner Co"}],
        "workspaces": [
            {"id": "ws_home", "name": "Customer Inc – Home", "account": "acc_1", "published": True,
             "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": "ana@acme.com", "role": "editor"},
                       {"email": "security@acme.com", "role": "viewer"}],
             "domains": [{"domain": "customer.com", "role": "viewer"}]},
            {"id": "ws_side", "name": "Side project", "account": "acc_2", "published": True,
             "users": side_users},
        ]}}}


CLEAN_SIDE = [{"email": "jane@acme.com", "role": "owner"}, {"email": "security@acme.com", "role": "viewer"}]


def _line(needle: str) -> int:
    return next(i for i, text in enumerate(MANIFEST.splitlines(), 1) if needle in text)


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    return path


def _served(monkeypatch: pytest.MonkeyPatch, seed: dict[str, Any]) -> Iterator[Emulator]:
    emulator = Emulator.from_seed(copy.deepcopy(seed))
    base_url, stop = start_background_server(emulator)
    monkeypatch.setenv("RECONCILER_BASE_URL", base_url)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    try:
        yield emulator
    finally:
        stop()


@pytest.fixture
def company(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The small company, web-app extras on the side workspace, served on 127.0.0.1."""
    yield from _served(monkeypatch, _seed([{"email": "jane@acme.com", "role": "owner"},
                                           {"email": "eve@gmail.com", "role": "editor"}]))


@pytest.fixture
def clean_company(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    yield from _served(monkeypatch, _seed(CLEAN_SIDE))


# --- who --------------------------------------------------------------------


def test_who_shows_an_explicit_entry_with_its_file_and_line(company: Emulator, manifest: Path, capsys) -> None:
    code, out, err = run_cli(["who", "jane@acme.com", str(manifest)], capsys)
    assert (code, err) == (0, "")
    assert out == (
        "jane@acme.com has access to 2 workspaces: 1 named by a manifest, 1 reached only by rules, 0 by neither "
        "(2 workspaces read in 1 call):\n"
        f'  ws_home "Customer Inc – Home" (account Customer Inc): owner; group.customer-inc at {manifest}:'
        f"{_line('jane@acme.com, role: owner')}\n"
        '  ws_side "Side project" (account Partner Co): owner; not managed: granted in the web app\n')


def test_who_says_a_grant_whose_expires_date_has_come_is_removed_by_the_next_apply(company: Emulator, manifest: Path,
                                                                                  capsys) -> None:
    """who reads on today's date (UTC), as the plan does: a grant that expired is there still, and leaving."""
    manifest.write_text(MANIFEST.replace("{email: jane@acme.com, role: owner}",
                                         "{email: jane@acme.com, role: owner, expires: 2020-01-01}"), encoding="utf-8")
    code, out, err = run_cli(["who", "jane@acme.com", str(manifest)], capsys)
    assert (code, err) == (0, "")
    assert (f'  ws_home "Customer Inc – Home" (account Customer Inc): owner, until 2020-01-01; group.customer-inc at '
            f"{manifest}:{_line('jane@acme.com, role: owner')} granted it until its expires date, which has come: "
            "the next apply removes it\n") in out


def test_who_does_not_look_for_the_lint_warnings_it_never_shows(company: Emulator, manifest: Path, capsys,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    linted: list[object] = []
    monkeypatch.setattr("reconciler.manifest.load.lint", lambda desired, today: linted.append(desired) or [])
    code, _, err = run_cli(["who", "jane@acme.com", str(manifest)], capsys)
    assert (code, err, linted) == (0, "", [])
    assert run_cli(["validate", str(manifest)], capsys)[0] == 0
    assert len(linted) == 1  # validate shows them, so it looks


def test_who_shows_a_team_member_by_the_team_the_list_names(company: Emulator, manifest: Path, capsys) -> None:
    code, out, _ = run_cli(["who", "ana@acme.com", str(manifest)], capsys)
    assert out.splitlines()[1] == (
        f'  ws_home "Customer Inc – Home" (account Customer Inc): editor; team customer-success '
        f"(group.customer-inc at {manifest}:{_line('team: customer-success')})")


def test_who_shows_an_entry_a_rule_ensures_by_the_rule(company: Emulator, manifest: Path, capsys) -> None:
    code, out, _ = run_cli(["who", "security@acme.com", str(manifest)], capsys)
    assert out.splitlines()[1] == (
        f'  ws_home "Customer Inc – Home" (account Customer Inc): viewer; rule security-baseline at '
        f"{manifest}:{_line('security@acme.com')}")


def test_who_shows_a_grant_made_in_the_web_app_as_not_managed(company: Emulator, manifest: Path, capsys) -> None:
    code, out, _ = run_cli(["who", "eve@gmail.com", str(manifest)], capsys)
    assert out == ("eve@gmail.com has access to 1 workspace: 0 named by a manifest, 1 reached only by rules, 0 by "
                   "neither (2 workspaces read in 1 call):\n"
                   '  ws_side "Side project" (account Partner Co): editor; not managed: granted in the web app\n')


def test_who_lists_a_person_reached_through_their_domain(company: Emulator, manifest: Path, capsys) -> None:
    code, out, _ = run_cli(["who", "raj@customer.com", str(manifest)], capsys)
    assert out.splitlines()[1] == (
        f'  ws_home "Customer Inc – Home" (account Customer Inc): viewer through domain customer.com; '
        f"group.customer-inc at {manifest}:{_line('domain: customer.com')}")


def test_who_reads_the_company_once_and_writes_nothing(company: Emulator, manifest: Path, capsys) -> None:
    run_cli(["who", "jane@acme.com", str(manifest)], capsys)
    assert [(r.method, r.path) for r in company.requests] == [("GET", "/v1/workspaces")]
    assert sorted(p.name for p in manifest.parent.iterdir()) == ["manifest.yaml"]


def test_who_refuses_a_subject_that_is_no_email_or_domain_before_any_call(company: Emulator, manifest: Path,
                                                                          capsys) -> None:
    code, out, err = run_cli(["who", "jane at acme", str(manifest)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("Error: who 'jane at acme': not a domain: it holds U+0020 (SPACE).")
    assert company.requests == []


# --- audit: exit codes --------------------------------------------------------


def test_audit_of_a_clean_company_exits_0(clean_company: Emulator, manifest: Path, capsys) -> None:
    code, out, err = run_cli(["audit", str(manifest)], capsys)
    assert (code, out, err) == (0, "Audit of 2 workspaces (1 named by a manifest, 1 reached only by rules), read in 1 call: no "
                                   "policy violation, nothing the rules would change.\n", "")


def test_audit_exits_2_on_a_policy_violation_in_a_workspace_no_manifest_names(
        monkeypatch: pytest.MonkeyPatch, manifest: Path, capsys) -> None:
    side = [*CLEAN_SIDE, {"email": "eve@gmail.com", "role": "editor"}]
    for _ in _served(monkeypatch, _seed(side)):
        code, out, _ = run_cli(["audit", str(manifest)], capsys)
    assert code == 2
    assert out == (
        "Audit of 2 workspaces (1 named by a manifest, 1 reached only by rules), read in 1 call: 1 policy violation, nothing the "
        "rules would change.\n\nPolicy violations (1):\n"
        f'  ws_side "Side project" (account Partner Co): user eve@gmail.com editor: outside the allowed domains: '
        f"at most viewer (policy maxRoleOutside at {manifest}:{_line('maxRoleOutside')}), not editor; "
        "not managed: granted in the web app\n")


def test_audit_says_a_violation_on_a_grant_whose_expires_date_has_come_is_removed_by_the_next_apply(
        monkeypatch: pytest.MonkeyPatch, manifest: Path, capsys) -> None:
    """The audit reads on today's date (UTC), as the plan does: the line making jane owner has expired, and she
    was lowered to editor in the web app."""
    manifest.write_text(MANIFEST.replace("  maxRoleOutside: viewer\n", "  maxRoleOutside: viewer\n  protectedOwners: "
                                         "[jane@acme.com]\n").replace(
        "{email: jane@acme.com, role: owner}", "{email: jane@acme.com, role: owner, expires: 2020-01-01}, "
                                               "{email: ops@acme.com, role: owner}"), encoding="utf-8")
    seed = _seed(CLEAN_SIDE)
    home = seed["companies"]["acme"]["workspaces"][0]["users"]
    home[0]["role"] = "editor"
    home.append({"email": "ops@acme.com", "role": "owner"})
    for _ in _served(monkeypatch, seed):
        code, out, err = run_cli(["audit", str(manifest)], capsys)
    assert code == 2, err
    violation = next(line for line in out.splitlines() if "user jane@acme.com editor" in line)
    granted = _line("jane@acme.com, role: owner") + 1  # below the protectedOwners line added
    assert violation.endswith(f"group.customer-inc at {manifest}:{granted} granted it until its expires date, which "
                              "has come: the next apply removes it")


def test_audit_exits_2_when_a_rule_would_change_a_workspace(
        monkeypatch: pytest.MonkeyPatch, manifest: Path, capsys) -> None:
    for _ in _served(monkeypatch, _seed([{"email": "jane@acme.com", "role": "owner"}])):
        code, out, _ = run_cli(["audit", str(manifest)], capsys)
    assert code == 2
    assert out.splitlines()[-1] == (
        f'  ws_side "Side project" (account Partner Co): + user security@acme.com viewer: rule security-baseline '
        f"ensures viewer ({manifest}:{_line('security@acme.com')})")


def test_audit_exits_1_on_a_manifest_error_before_any_call(clean_company: Emulator, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules:\n  r:\n    match: {all: true}\n", encoding="utf-8")
    code, out, err = run_cli(["audit", str(bad)], capsys)
    assert (code, out) == (1, "")
    assert f"{bad}:3" in err and "Traceback" not in err
    assert clean_company.requests == []


def test_audit_writes_neither_state_nor_lock_and_sends_only_the_listing(company: Emulator, manifest: Path,
                                                                        capsys) -> None:
    run_cli(["audit", str(manifest), "--format", "json"], capsys)
    assert [(r.method, r.path) for r in company.requests] == [("GET", "/v1/workspaces")]
    assert sorted(p.name for p in manifest.parent.iterdir()) == ["manifest.yaml"]


# --- a thousand workspaces ------------------------------------------------------

N = 1000


def _thousand() -> dict[str, Any]:
    seed = _seed(CLEAN_SIDE)
    workspaces = seed["companies"]["acme"]["workspaces"]
    workspaces += [{"id": f"ws_{i:04d}", "name": f"Client {i}", "account": "acc_2", "published": True,
                    "users": CLEAN_SIDE} for i in range(N - len(workspaces))]
    return seed


@pytest.mark.parametrize("argv", [["who", "jane@acme.com"], ["audit"]], ids=["who", "audit"])
def test_a_company_of_1000_workspaces_is_read_in_10_listing_calls(
        monkeypatch: pytest.MonkeyPatch, manifest: Path, capsys, argv: list[str]) -> None:
    for emulator in _served(monkeypatch, _thousand()):
        code, out, _ = run_cli([*argv, str(manifest)], capsys)
        requests = [(r.method, r.path, r.status) for r in emulator.requests]
    assert requests == [("GET", "/v1/workspaces", 200)] * math.ceil(N / 100)
    assert code == 0
    assert "1,000 workspaces" in out.splitlines()[0]


def test_the_in_process_read_of_1000_workspaces_takes_10_calls(manifest: Path) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed(_thousand(), clock=clock)
    desired = load_desired(manifest)
    live = read_live(client_for(emulator, clock))
    company = company_access(desired, live, State())
    assert emulator.request_count() == emulator.request_count("GET", "/v1/workspaces") == 10
    assert (company.calls, company.total, len(company.rows)) == (10, 1000, 2 * 1000 + 2)
    assert audit(desired, company, make_plan(desired, live, State())).clean
