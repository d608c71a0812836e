"""Mistakes that are valid YAML and valid manifests but say nothing (issue 41 item 11): an unused team, an
empty team, a rule's ``except`` naming no workspace of the company, a rule that matches nothing. Each is said
with its file:line, through the real command line: ``validate`` warns where the manifests alone show it
(``--strict`` makes it an error), ``plan`` where the company is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import QUICKSTART, run_cli

OWNER = """version: 1
workspaces:
  portal:
    id: ws_portal
    access:
      users:
        - {email: jane@acme.com, role: owner}
"""
ENSURE = "    ensure:\n      users: [{email: sec@acme.com, role: viewer}]\n"


def _validate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    (tmp_path / "m.yaml").write_text(text, encoding="utf-8")
    return run_cli(["validate", str(tmp_path), *flags], capsys)


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["plan", str(tmp_path), "--emulator", str(tmp_path / "emulator.yaml"), "--seed",
                    str(QUICKSTART / "seed.yaml"), "--state", str(tmp_path / "s.json")], capsys)


@pytest.mark.parametrize(("text", "line", "warning"), [
    ("teams:\n  unused: [a@acme.com]\n" + OWNER, 2,
     "team.unused: no access list or rule names it, so it grants nothing; name it in a list's or a rule's teams, "
     "or remove it"),
    ("teams:\n  empty: []\n" + OWNER, 2,
     "team.empty: has no members, so every list and rule naming it grants nobody; add its people or remove it"),
    (OWNER + "rules:\n  nothing:\n    match: {names: []}\n" + ENSURE, 10,
     "rule.nothing: match.names is an empty list, so the rule matches no workspace (a list holds when any of its "
     "items does); give its items, or remove it"),
    (OWNER + "rules:\n  nothing:\n    match: {accounts: [], templates: []}\n" + ENSURE, 10,
     "rule.nothing: match.accounts and match.templates are empty lists, so the rule matches no workspace (a list "
     "holds when any of its items does); give their items, or remove them"),
], ids=["unused-team", "empty-team", "rule-empty-names", "rule-empty-accounts-templates"])
def test_validate_warns_with_file_and_line_and_strict_makes_it_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, warning: str) -> None:
    manifest = tmp_path / "m.yaml"
    code, out, err = _validate(tmp_path, text, capsys)
    assert (code, err) == (0, "")
    assert f"\nWarning: {manifest}:{line}: {warning}\n" in out
    code, out, err = _validate(tmp_path, text, capsys, "--strict")
    assert (code, out) == (1, "")
    assert f"  {manifest}:{line}: {warning} (an error with --strict)\n" in err


def test_a_rule_matching_no_workspace_of_the_company_is_a_plan_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.yaml").write_text(OWNER + "rules:\n  never:\n    match: {names: ['Nope*']}\n" + ENSURE,
                                     encoding="utf-8")
    code, out, err = _plan(tmp_path, capsys)
    assert code == 0, err
    assert (f"Warning: {tmp_path / 'm.yaml'}:10: rule.never: matches no workspace of the company (4 listed); check "
            "its match (a name pattern is case-sensitive)\n") in out


def test_a_rules_except_naming_no_workspace_of_the_company_refuses_the_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.yaml").write_text(
        OWNER + "rules:\n  spare:\n    match:\n      all: true\n      except: [ws_portl]\n" + ENSURE, encoding="utf-8")
    code, out, err = _plan(tmp_path, capsys)
    assert (code, out) == (1, "")
    assert (f"  {tmp_path / 'm.yaml'}:12: rules.spare: except names workspace 'ws_portl', which the company has no "
            "workspace with, so the rule would reach the workspace it was meant to spare. Did you mean ws_portal?"
            ) in err
    assert "Traceback" not in err
