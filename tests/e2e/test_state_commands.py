"""``state list|show|rm`` and ``import`` through the real CLI entry point,
on the onboarding example and its emulator seed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.state import load_state
from tests.e2e.conftest import ROOT, run_cli

KICKOFF = "group.customer-inc.workspace.kickoff"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    return root


def emu(root: Path) -> list[str]:
    return ["--emulator", str(root / "emulator.yaml"), "--seed", str(root / "seed.yaml")]


def applied(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["apply", str(root), *emu(root), "--auto-approve"], capsys)
    assert code == 0, err


def test_the_onboarding_demo_applies_and_replans_to_no_changes(example: Path, capsys) -> None:
    code, out, err = run_cli(["demo", str(example)], capsys)
    assert code == 0, err
    last_step = out.rsplit("$ reconciler plan", 1)[1]
    assert "No changes." in last_step
    assert "2 workspaces created (2 credits)" in out


def test_state_list_names_every_address_with_its_workspace(example: Path, capsys) -> None:
    applied(example, capsys)
    code, out, _ = run_cli(["state", "list", str(example)], capsys)
    assert code == 0
    rows = dict(line.split() for line in out.splitlines())
    assert rows["group.customer-inc"] == "ws_home"
    assert rows["group.customer-inc.workspace.quarterly-review"] == "ws_qbr"
    assert rows[KICKOFF].startswith("ws_")
    assert list(rows) == sorted(rows)


def test_state_show_prints_what_the_state_records_as_json(example: Path, capsys) -> None:
    applied(example, capsys)
    code, out, _ = run_cli(["state", "show", "group.customer-inc.workspace.welcome", str(example)], capsys)
    assert code == 0
    assert json.loads(out) == {
        "address": "group.customer-inc.workspace.welcome", "id": "ws_welcome", "connected_to": "ws_home",
        "name": "Customer Inc – Welcome", "pages": {"pg_welcome_faq": True}, "tasks": {"task_welcome_intro": True},
    }


def test_state_show_of_an_unknown_address_suggests_the_closest(example: Path, capsys) -> None:
    applied(example, capsys)
    code, _, err = run_cli(["state", "show", "group.customer-inc.workspace.kickof", str(example)], capsys)
    assert code == 1
    assert "records nothing for group.customer-inc.workspace.kickof" in err and f"Did you mean {KICKOFF}" in err


def test_state_rm_forgets_without_touching_the_service(example: Path, capsys) -> None:
    applied(example, capsys)
    serial = load_state(example / "reconciler.state.json").serial
    data_before = (example / "emulator.yaml").read_bytes()
    code, out, _ = run_cli(["state", "rm", KICKOFF, str(example)], capsys)
    assert code == 0 and "The service was not changed" in out
    after = load_state(example / "reconciler.state.json")
    assert KICKOFF not in after.resources and after.serial == serial + 1
    assert (example / "emulator.yaml").read_bytes() == data_before


def test_import_adopts_the_workspace_a_lost_answer_created(example: Path, capsys) -> None:
    applied(example, capsys)
    kickoff_id = load_state(example / "reconciler.state.json").resources[KICKOFF].id
    run_cli(["state", "rm", KICKOFF, str(example)], capsys)
    code, out, _ = run_cli(["plan", str(example), *emu(example)], capsys)
    assert code == 0 and f"reconciler import {KICKOFF} {kickoff_id}" in out  # needs a person, the rest planned

    code, out, err = run_cli(["import", KICKOFF, kickoff_id, str(example), *emu(example)], capsys)
    assert code == 0, err
    assert f"Imported workspace {kickoff_id}" in out
    code, out, _ = run_cli(["plan", str(example), *emu(example)], capsys)
    assert code == 0
    # Membership of an imported workspace is unknown: one harmless connect, no creation.
    assert "+ connect to group.customer-inc" in out and "from template" not in out
    assert "no workspace credits" in out


def test_import_refuses_a_workspace_of_another_template(example: Path, capsys) -> None:
    code, _, err = run_cli(["import", KICKOFF, "ws_partner", str(example), *emu(example)], capsys)
    assert code == 1
    assert "it was not made from a template, the manifest asks for tpl_kickoff" in err
    assert not (example / "reconciler.state.json").exists()


def test_import_refuses_a_workspace_that_does_not_exist(example: Path, capsys) -> None:
    code, _, err = run_cli(["import", KICKOFF, "ws_nope", str(example), *emu(example)], capsys)
    assert code == 1 and "workspace ws_nope does not exist" in err


def test_import_refuses_an_address_no_manifest_declares(example: Path, capsys) -> None:
    code, _, err = run_cli(["import", "group.customer-inc.workspace.kickof", "ws_1", str(example), *emu(example)],
                           capsys)
    assert code == 1 and "no manifest" in err and f"Did you mean {KICKOFF}" in err


def test_import_refuses_an_address_the_state_binds_already(example: Path, capsys) -> None:
    applied(example, capsys)
    code, _, err = run_cli(["import", KICKOFF, "ws_partner", str(example), *emu(example)], capsys)
    assert code == 1 and f"reconciler state rm {KICKOFF}" in err


def test_reassert_on_the_command_line_resends_write_only_values(example: Path, capsys) -> None:
    applied(example, capsys)
    code, out, _ = run_cli(["plan", str(example), *emu(example), "--reassert", "--detailed-exitcode"], capsys)
    assert code == 2
    assert "re-asserted (--reassert)" in out and "4 to connect" in out and "5 section/page/task values" in out


def test_the_state_records_since_when_each_access_entry_is_managed(example: Path, capsys) -> None:
    import datetime

    applied(example, capsys)
    code, out, _ = run_cli(["state", "show", "workspace.partner-portal", str(example)], capsys)
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert json.loads(out)["access"]["since"] == {"user:ops@acme.com": today, "user:lee@partner.io": today}
