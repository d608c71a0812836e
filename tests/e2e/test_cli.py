"""The CLI as a user meets it: exit codes, messages, and no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import QUICKSTART, TOKEN, emu_args, run_cli, seed_company

SECRET = "s3cret-token-never-printed"


pytestmark = pytest.mark.usefixtures("no_ambient_connection")


def test_validate_needs_no_token(project: Path, capsys) -> None:
    code, out, _ = run_cli(["validate", str(project)], capsys)
    assert code == 0
    assert out == (f"The manifests in {project} are valid: 1 group with 0 members, 1 standalone workspace, "
                   "2 access lists, 0 assets, 1 file.\n")


def test_validate_reports_file_and_line_and_exits_1(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "m.yaml"
    bad.write_text("version: 1\nworkspaces:\n  p:\n    id: ws_1\n    access:\n      users: [{email: a@b.co, role: admin}]\n")
    code, _, err = run_cli(["validate", str(bad)], capsys)
    assert code == 1
    assert f"{bad}:6" in err
    assert "Traceback" not in err


def test_plan_detailed_exitcode_is_2_with_changes_then_0_after_apply(project: Path, capsys) -> None:
    code, out, _ = run_cli(["plan", str(project), *emu_args(project), "--detailed-exitcode"], capsys)
    assert code == 2
    assert "Plan: 2 to add, 1 to change, 1 to remove." in out
    code, out, _ = run_cli(["apply", str(project), *emu_args(project), "--auto-approve"], capsys)
    assert code == 0, out
    assert "Apply complete" in out
    code, out, _ = run_cli(["plan", str(project), *emu_args(project), "--detailed-exitcode"], capsys)
    assert code == 0
    assert out.startswith("No changes.")


def test_plan_without_a_service_says_how_to_set_one(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project)], capsys)
    assert code == 1
    assert "RECONCILER_BASE_URL" in err and "never falls back to the emulator" in err


def test_plain_http_to_a_remote_host_is_refused(project: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RECONCILER_TOKEN", SECRET)
    code, _, err = run_cli(["plan", str(project), "--base-url", "http://api.example.com"], capsys)
    assert code == 1
    assert "http://" in err and SECRET not in err


def test_apply_without_a_terminal_and_without_auto_approve_refuses(project: Path, capsys) -> None:
    code, _, err = run_cli(["apply", str(project), *emu_args(project)], capsys)
    assert code == 1
    assert "--auto-approve" in err
    code, out, _ = run_cli(["plan", str(project), *emu_args(project), "--detailed-exitcode"], capsys)
    assert code == 2  # nothing was applied


def test_wrong_token_is_a_clear_401_that_never_shows_the_token(project: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RECONCILER_TOKEN", SECRET)
    code, out, err = run_cli(["plan", str(project), *emu_args(project)], capsys)
    assert code == 1
    assert "401" in err and "GET /workspaces" in err
    assert SECRET not in out + err
    assert "Traceback" not in err


def test_token_never_lands_in_output_plan_or_state(project: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    seed = project / "seed.yaml"
    seed.write_text(seed.read_text().replace(TOKEN, SECRET))
    token_file = tmp_path / "token"
    token_file.write_text(SECRET + "\n")
    plan_file = tmp_path / "plan.json"
    args = [*emu_args(project), "--token-file", str(token_file)]
    outputs = [run_cli(["plan", str(project), *args, "--out", str(plan_file), "--format", "json"], capsys)]
    outputs.append(run_cli(["apply", str(project), *args, "--plan", str(plan_file), "--auto-approve"], capsys))
    assert [code for code, _, _ in outputs] == [0, 0]
    written = plan_file.read_text() + (project / "reconciler.state.json").read_text()
    assert SECRET not in written + "".join(o + e for _, o, e in outputs)


def test_unknown_workspace_id_names_the_manifest_line(project: Path, capsys) -> None:
    manifest = project / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("id: ws_portal", "id: ws_missing"))
    code, _, err = run_cli(["plan", str(project), *emu_args(project)], capsys)
    assert code == 1
    assert f"{manifest}:" in err and "ws_missing does not exist" in err


def test_stale_saved_plan_is_refused(project: Path, tmp_path: Path, capsys) -> None:
    plan_file = tmp_path / "plan.json"
    assert run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)[0] == 0
    manifest = project / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("role: commenter", "role: viewer"))
    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file), "--auto-approve"], capsys)
    assert code == 1
    assert "is stale, so nothing was changed. The manifests changed since it was made." in err


def test_saved_plan_applies_when_nothing_moved(project: Path, tmp_path: Path, capsys) -> None:
    plan_file = tmp_path / "plan.json"
    run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)
    code, out, _ = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file), "--auto-approve"], capsys)
    assert code == 0
    assert "2 added, 1 changed, 1 removed" in out


def test_max_removals_refuses_before_any_call(project: Path, capsys) -> None:
    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--auto-approve", "--max-removals", "0"], capsys)
    assert code == 1
    assert "more than --max-removals 0" in err


def test_json_plan_has_a_versioned_shape(project: Path, capsys) -> None:
    code, out, _ = run_cli(["plan", str(project), *emu_args(project), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert doc["format_version"] == 3
    assert {c["address"] for c in doc["changes"]} == {"group.acme-onboarding", "workspace.partner-portal"}


def test_bad_rate_limit_flag_is_a_usage_error_exit_1(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project), *emu_args(project), "--rate-limit", "default=fast"], capsys)
    assert code == 1
    assert "--rate-limit 'default=fast'" in err


def test_unknown_option_exits_1_with_usage_hint(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", "--frobnicate"], capsys)
    assert code == 1
    assert "No such option" in err and "--help" in err


def test_demo_runs_the_quickstart(capsys) -> None:
    code, out, _ = run_cli(["demo", str(QUICKSTART)], capsys)
    assert code == 0
    assert "Plan: 2 to add, 1 to change, 1 to remove." in out
    assert "Apply complete" in out
    last_step = out.rsplit("$ reconciler plan", 1)[1]
    assert "No changes. The service matches the manifests (2 access lists checked)." in last_step


def test_two_company_emulator_needs_a_token_to_choose(project: Path, capsys, write_seed) -> None:
    import yaml

    seed = yaml.safe_load((project / "seed.yaml").read_text())
    seed["companies"]["globex"] = seed_company([])["companies"]["acme"] | {"token": "dev-token-globex"}
    (project / "seed.yaml").write_text(yaml.safe_dump(seed))
    code, _, err = run_cli(["plan", str(project), *emu_args(project)], capsys)
    assert code == 1
    assert "2 companies" in err and "RECONCILER_TOKEN" in err


def test_a_target_that_matches_nothing_is_an_error_naming_the_closest(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project), *emu_args(project), "--target", "group.acme-onbaording"], capsys)
    assert code == 1
    assert "--target group.acme-onbaording matches no address" in err and "Closest: group.acme-onboarding" in err


def test_a_saved_plan_refuses_other_targets_on_the_command_line(project: Path, tmp_path: Path, capsys) -> None:
    plan_file = tmp_path / "plan.json"
    run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)
    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file),
                            "--target", "workspace.partner-portal", "--auto-approve"], capsys)
    assert code == 1 and "was made with no --target" in err


def test_each_crash_gets_its_own_log_file(capsys, monkeypatch, tmp_path: Path) -> None:
    # The one test that needs a bug: a command is replaced by one that raises, to reach the crash handler.
    import reconciler.commands.validate as commands

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)

    def broken(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    monkeypatch.setattr(commands, "validate", broken)
    logs = []
    for _ in range(2):
        code, _, err = run_cli(["validate", "."], capsys)
        assert code == 3 and "Internal error in reconciler (a bug)" in err
        logs.append(Path(err.rsplit("written to ", 1)[1].strip().rstrip(".")))
    assert logs[0] != logs[1] and all(p.parent == tmp_path for p in logs)
    assert all("RuntimeError: a bug" in p.read_text() for p in logs)


def test_an_error_quoting_a_hostile_manifest_is_printed_escaped(project: Path, capsys) -> None:
    manifest = project / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("id: ws_portal", 'id: "ws_\\e[2J\\e[31mOK"'))
    code, _, err = run_cli(["plan", str(project), *emu_args(project)], capsys)
    assert code == 1
    # Refused at validation now (an id holds no control character), before any call; still escaped.
    assert "\x1b" not in err and "'ws_\\x1b[2J\\x1b[31mOK' is not an id as the service shows it" in err


def test_a_saved_plan_from_another_service_is_refused(project: Path, tmp_path: Path, capsys) -> None:
    plan_file = tmp_path / "plan.json"
    run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)
    other = ["--emulator", str(tmp_path / "other.yaml"), "--seed", str(project / "seed.yaml")]
    code, _, err = run_cli(["apply", str(project), *other, "--plan", str(plan_file), "--auto-approve"], capsys)
    assert code == 1
    assert f"was made against the emulator of {(project / 'emulator.yaml').resolve()}, not the emulator of " \
           f"{(tmp_path / 'other.yaml').resolve()}, so nothing was changed" in err


@pytest.mark.parametrize("damage", ["truncated", "not json", "another kind"])
def test_a_damaged_saved_plan_is_refused_with_nothing_applied(project: Path, tmp_path: Path, capsys,
                                                              damage: str) -> None:
    plan_file = tmp_path / "plan.json"
    run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)
    text = plan_file.read_text()
    plan_file.write_text({"truncated": text[: len(text) // 2], "not json": "%PDF-1.4",
                          "another kind": text.replace('"reconciler-plan"', '"terraform-plan"')}[damage])
    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file),
                            "--auto-approve"], capsys)
    assert code == 1 and f"{plan_file} is not a plan saved by reconciler plan --out:" in err
    code, out, _ = run_cli(["plan", str(project), *emu_args(project), "--detailed-exitcode"], capsys)
    assert code == 2  # nothing was applied


def test_help_lists_every_command_once(capsys) -> None:
    from reconciler.cli import cli

    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")
              and line.split()[0] in cli.commands]
    assert sorted(listed) == sorted(cli.commands)


def test_emulator_on_the_command_line_beats_a_base_url_in_the_environment(project: Path, capsys,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("RECONCILER_BASE_URL", "https://service.example.com")
    code, out, err = run_cli(["plan", str(project), *emu_args(project)], capsys)
    assert (code, err) == (0, "")
    assert "reconciler will make these changes:" in out


def test_emulator_and_base_url_both_on_the_command_line_are_refused(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project), *emu_args(project), "--base-url", "https://service.example.com"],
                           capsys)
    assert (code, err) == (1, "Error: Give either --emulator or --base-url, not both.\n")


def test_top_level_help_says_what_review_is_for_in_one_line_like_every_other_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    from reconciler.cli import COMMAND_SUMMARIES, cli

    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    assert sorted(COMMAND_SUMMARIES) == sorted(name for name, c in cli.commands.items() if not c.hidden)
    assert "review        access review campaigns kept in git: start, status, close," in out
