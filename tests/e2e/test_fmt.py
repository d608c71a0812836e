"""``reconciler fmt [--check] PATH``: one canonical layout, comments kept, through the real entry point."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import ROOT, run_cli

MESSY = """\
# yaml-language-server: $schema=manifest.schema.json
# Who may access the partner portal.
version: 1
workspaces:
    portal:         # the partner portal
        id: ws_portal
        access:
            users:
            - {email: ops@acme.com,   role: owner}   # keeps the lights on
            -   email: lee@partner.io
                role: commenter
            # the domain entry below is reviewed every quarter
            domains: [ {domain: partner.io, role: viewer} ]
        pages:
          pg_1: {hidden: true}    \n
moved:
- {from: workspace.partner-portal, to: workspace.portal}
"""

# Indentation, list dashes, flow spacing and trailing spaces normalised; every comment where it was
# written (its line and its column); the blank line and the key order kept.
CANONICAL = """\
# yaml-language-server: $schema=manifest.schema.json
# Who may access the partner portal.
version: 1
workspaces:
  portal:           # the partner portal
    id: ws_portal
    access:
      users:
        - {email: ops@acme.com, role: owner}         # keeps the lights on
        - email: lee@partner.io
          role: commenter
            # the domain entry below is reviewed every quarter
      domains: [{domain: partner.io, role: viewer}]
    pages:
      pg_1: {hidden: true}

moved:
  - {from: workspace.partner-portal, to: workspace.portal}
"""


@pytest.fixture
def messy(tmp_path: Path) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(MESSY, encoding="utf-8")
    return path


def test_fmt_rewrites_a_manifest_in_the_canonical_layout_keeping_its_comments(
        messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["fmt", str(messy)], capsys)
    assert (code, err) == (0, "")
    assert out == f"{messy}\nRewrote 1 manifest file of 1 in {messy}.\n"
    assert messy.read_text(encoding="utf-8") == CANONICAL


def test_fmt_never_changes_what_a_manifest_means(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = yaml.safe_load(messy.read_text(encoding="utf-8"))
    run_cli(["fmt", str(messy)], capsys)
    assert yaml.safe_load(messy.read_text(encoding="utf-8")) == before


def test_fmt_of_a_formatted_manifest_changes_nothing(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(["fmt", str(messy)], capsys)
    code, out, _ = run_cli(["fmt", str(messy)], capsys)
    assert code == 0
    assert out == f"The manifest file in {messy} is in the canonical layout; nothing was changed.\n"
    assert messy.read_text(encoding="utf-8") == CANONICAL


def test_fmt_check_lists_a_file_that_would_change_exits_1_and_writes_nothing(
        messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["fmt", "--check", str(messy)], capsys)
    assert (code, out) == (1, f"{messy}\n")
    assert err == (f"Error: 1 manifest file of 1 is not in the canonical layout (listed above). Run 'reconciler fmt "
                   f"{messy}' to rewrite it; nothing was changed.\n")
    assert messy.read_text(encoding="utf-8") == MESSY


def test_fmt_check_of_the_examples_passes(capsys: pytest.CaptureFixture[str]) -> None:
    for example in ("quickstart", "onboarding", "company", "gitops/manifests"):
        code, out, _ = run_cli(["fmt", "--check", str(ROOT / "examples" / example)], capsys)
        assert code == 0, out


def test_fmt_of_a_directory_leaves_the_emulator_seed_beside_the_manifests_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    seed = (root / "seed.yaml").read_bytes()
    (root / "workspaces.yaml").write_text(MESSY.replace("version: 1\n", "version: 1\n", 1), encoding="utf-8")
    code, out, _ = run_cli(["fmt", str(root)], capsys)
    assert code == 0 and out == f"{root / 'workspaces.yaml'}\nRewrote 1 manifest file of 3 in {root}.\n"
    assert (root / "seed.yaml").read_bytes() == seed


def test_fmt_of_a_file_that_is_not_yaml_names_its_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yaml").write_text(MESSY, encoding="utf-8")
    broken = tmp_path / "b.yaml"
    broken.write_text("version: 1\nworkspaces:\n  portal: {id: ws_1\n", encoding="utf-8")
    code, out, err = run_cli(["fmt", str(tmp_path)], capsys)
    assert (code, out) == (1, "")
    # As validate words it (the validating reader reads the file first), then that fmt cannot format it.
    assert err == (f"Error: 1 problem in the manifest:\n  {broken}:4: invalid YAML: while parsing a flow mapping did "
                   "not find expected ',' or '}'; it cannot be formatted\n")
    assert (tmp_path / "a.yaml").read_text(encoding="utf-8") == MESSY, "nothing is written while a file is broken"


def _alias_bomb() -> str:
    """Nine anchors, each a list of ten aliases of the one before: 10**9 values once expanded."""
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    return "\n".join([*lines, "workspaces: {}"]) + "\n"


@pytest.mark.parametrize(("text", "line", "message"), [
    (_alias_bomb(), 9, "aliases (*name) repeat this and other anchored values to more than 1,000,000 values in all; "
                       "refused so that validation cannot be stalled: alias smaller parts"),
    ("version: 1\nworkspaces: " + "[" * 5000 + "]" * 5000 + "\n", 2,
     "nested too deeply (more than 100 levels of lists and mappings)"),
], ids=["alias-bomb", "deep-nesting"])
@pytest.mark.parametrize("check", [True, False], ids=["check", "rewrite"])
def test_fmt_refuses_what_validate_refuses_for_its_size_at_once_naming_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, message: str, check: bool) -> None:
    """Issue 41 item 7: fmt --check ran for minutes on an alias bomb, and a deep nesting crashed it (exit 3)."""
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text, encoding="utf-8")
    started = time.monotonic()
    code, out, err = run_cli(["fmt", *(["--check"] if check else []), str(tmp_path)], capsys)
    assert time.monotonic() - started < 1.5
    assert (code, out) == (1, "")
    assert err == f"Error: 1 problem in the manifest:\n  {manifest}:{line}: {message}; it cannot be formatted\n"
    code, _, err = run_cli(["validate", str(tmp_path)], capsys)
    assert code == 1 and f"{manifest}:{line}: {message}" in err  # the same words
    assert manifest.read_text(encoding="utf-8") == text


def test_fmt_keeps_a_files_permissions(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy.chmod(0o640)
    run_cli(["fmt", str(messy)], capsys)
    assert messy.stat().st_mode & 0o777 == 0o640


def test_fmt_help_explains_the_layout_and_check() -> None:
    from click.testing import CliRunner

    from reconciler.cli import cli

    out = " ".join(CliRunner().invoke(cli, ["fmt", "--help"]).output.split())
    assert "Rewrite the manifests in PATH (a file or directory) in one canonical layout, comments kept." in out
    assert "Comments (each on its line, at its column), key order, and block or flow style stay as written" in out
    assert "The result always means what the file meant, or nothing is written." in out
    assert "with --check, exit 1 when some file would change, listing it, and nothing is written." in out
