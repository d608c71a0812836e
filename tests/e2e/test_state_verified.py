"""The state is verified, never trusted.

The attack: the GitOps example kept the state in the repository, so a pull
request that edits only the state file could bind a group member to another
workspace (whose list the next apply replaces), or invent the reasons a
revocation is shown with.  Before planning, every record that names a live
object is checked against the service, and a state that cannot be explained
is refused: exit 1, the address, what the state says and what the service
says, the way out, and nothing written.

Every command runs through the real entry point on the onboarding example
and its emulator file, whose bytes prove that nothing was written.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, run_cli

KICKOFF = "group.customer-inc.workspace.kickoff"
WELCOME = "group.customer-inc.workspace.welcome"
GROUP = "group.customer-inc"
WAY_OUT = ("A state is verified, never trusted: it may have been edited (a pull request can change a state file "
           "kept in the repository), or the workspace changed in the web app. 'reconciler state verify' lists "
           "every mismatch; 'reconciler state rm ADDRESS' then 'reconciler import ADDRESS ID' binds an address "
           "again after checking the workspace.")

pytestmark = pytest.mark.usefixtures("no_ambient_connection")


@pytest.fixture
def applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The onboarding example, applied once: its state records every workspace."""
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    code, _, err = run_cli(["apply", str(root), *_emu(root), "--auto-approve"], capsys)
    assert code == 0, err
    return root


def _emu(root: Path) -> list[str]:
    return ["--emulator", str(root / "emulator.yaml"), "--seed", str(root / "seed.yaml")]


def _edit_state(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = root / "reconciler.state.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc["resources"])
    path.write_text(json.dumps(doc), encoding="utf-8")


def _refused_without_a_write(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Plan and apply both refuse; the emulator's data is byte for byte the same."""
    before = (root / "emulator.yaml").read_bytes()
    code, _, err = run_cli(["plan", str(root), *_emu(root)], capsys)
    assert code == 1, err
    apply_code, out, _ = run_cli(["apply", str(root), *_emu(root), "--auto-approve"], capsys)
    assert apply_code == 1 and "Apply complete" not in out
    assert (root / "emulator.yaml").read_bytes() == before
    return err


def _rebind_kickoff(resources: dict[str, Any]) -> None:
    resources[KICKOFF]["id"] = "ws_partner"
    del resources[KICKOFF]["connected_to"]


def test_a_member_the_state_binds_to_another_workspace_is_refused(applied: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's attack: the id changed, connected_to removed; the connection would replace ws_partner's list."""
    _edit_state(applied, _rebind_kickoff)

    err = _refused_without_a_write(applied, capsys)

    assert ("Error: The state does not match the service, so nothing was planned (3 records do not hold):\n"
            f"  '{KICKOFF}': the state says it is workspace 'ws_partner', made from 'tpl_kickoff' as the manifest "
            "says; the service says that workspace was made from no template.\n"
            f"  '{KICKOFF}': the state says workspace 'ws_partner' is named 'Customer Inc – Kickoff'; the service "
            "says 'Partner Portal'.\n"
            "  'workspace.partner-portal': the state says it is bound to 'ws_partner', which it also binds to "
            f"'{KICKOFF}'; one workspace or asset has one address, so this state cannot be explained.\n") in err


def test_a_rebound_member_stripped_of_its_recorded_facts_is_refused_by_its_template(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A careful forger drops the name and template the state recorded: the manifest's template still tells."""
    def forge(resources: dict[str, Any]) -> None:
        _rebind_kickoff(resources)
        resources[KICKOFF].pop("name")
        resources[KICKOFF].pop("template")

    _edit_state(applied, forge)

    err = _refused_without_a_write(applied, capsys)

    assert (f"  '{KICKOFF}': the state says it is workspace 'ws_partner', made from 'tpl_kickoff' as the manifest "
            "says; the service says that workspace was made from no template.\n") in err


def test_a_member_recorded_as_connected_to_another_group_is_refused(applied: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _edit_state(applied, lambda resources: resources[WELCOME].update(connected_to="ws_partner"))

    err = _refused_without_a_write(applied, capsys)

    assert (f"  '{WELCOME}': the state says workspace 'ws_welcome' is connected to the group of 'ws_partner'; "
            "the service shows it with an access list of its own, not that group's.\n") in err


def test_one_workspace_id_under_two_addresses_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_state(applied, lambda resources: resources.update({"workspace.decoy": {"id": "ws_home"}}))

    err = _refused_without_a_write(applied, capsys)

    assert ("  'workspace.decoy': the state says it is bound to 'ws_home', which it also binds to "
            "'group.customer-inc'; one workspace or asset has one address, so this state cannot be explained.\n"
            in err)


def test_a_revocation_reason_for_an_entry_never_recorded_is_refused(applied: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    def invent(resources: dict[str, Any]) -> None:
        resources[GROUP]["access"]["via"] = {"user:eve@customer.com": "rule security-baseline"}

    _edit_state(applied, invent)

    err = _refused_without_a_write(applied, capsys)

    assert (f"  '{GROUP}': the state says 'user:eve@customer.com' was put there by 'rule security-baseline'; it "
            "records no such entry, so this reason cannot be explained.\n") in err


def test_a_reason_in_free_text_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plan prints reasons from the state's facts: a fact that is prose would be printed as a reason."""
    def invent(resources: dict[str, Any]) -> None:
        resources[GROUP]["access"]["via"] = {"user:jane@acme.com": "rule x (left the manifest; listed since 2019)"}

    _edit_state(applied, invent)

    err = _refused_without_a_write(applied, capsys)

    assert (f"  '{GROUP}': the state says 'user:jane@acme.com' was put there by 'rule x (left the manifest; listed "
            "since 2019)'; that is not 'team KEY' or 'rule KEY', so it cannot be a reason.\n") in err


def test_a_managed_since_that_is_not_a_date_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_state(applied, lambda resources: resources[GROUP]["access"]["since"].update(
        {"user:jane@acme.com": "ever; approved by the CISO"}))

    err = _refused_without_a_write(applied, capsys)

    assert (f"  '{GROUP}': the state says 'user:jane@acme.com' has been managed since 'ever; approved by the "
            "CISO'; that is not a date (YYYY-MM-DD), so it cannot be a reason.\n") in err


def test_the_refusal_says_the_way_out(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_state(applied, lambda resources: resources.update({"workspace.decoy": {"id": "ws_home"}}))

    code, _, err = run_cli(["plan", str(applied), *_emu(applied)], capsys)

    assert code == 1
    assert "'reconciler state verify' lists every mismatch;" in err
    assert f"'reconciler state rm ADDRESS {applied}" in err and f"'reconciler import ADDRESS ID {applied}" in err
    assert "Traceback" not in err


def test_state_verify_lists_every_mismatch(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def two(resources: dict[str, Any]) -> None:
        _rebind_kickoff(resources)
        resources[WELCOME]["connected_to"] = "ws_partner"

    _edit_state(applied, two)

    code, out, _ = run_cli(["state", "verify", str(applied), *_emu(applied)], capsys)

    assert code == 1
    assert out.startswith(f"The state {applied / 'reconciler.state.json'} does not match the service "
                          "(4 mismatches):\n")
    assert out.count(f"  '{KICKOFF}':") == 2 and out.count(f"  '{WELCOME}':") == 1
    assert out.count("  'workspace.partner-portal':") == 1


def test_state_verify_of_a_true_state_says_so(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["state", "verify", str(applied), *_emu(applied)], capsys)

    assert code == 0
    assert out.startswith(f"The state {applied / 'reconciler.state.json'} matches the service: ")


def test_state_verify_names_a_workspace_the_service_does_not_have(applied: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _edit_state(applied, lambda resources: resources[KICKOFF].update(id="ws_nowhere"))

    code, out, _ = run_cli(["state", "verify", str(applied), *_emu(applied)], capsys)

    assert code == 1
    assert (f"  '{KICKOFF}': the state says it is workspace ws_nowhere; the service has no such workspace (or this "
            "token cannot see it).\n") in out
