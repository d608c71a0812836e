"""The hooks .pre-commit-hooks.yaml offers: each is a real reconciler command that passes on a
good example, run once on a directory (reconciler takes one PATH), for YAML files only."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import ROOT, run_cli

HOOKS: list[dict[str, Any]] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_the_hooks_are_validate_and_fmt_check() -> None:
    assert {hook["id"]: hook["entry"] for hook in HOOKS} == {
        "reconciler-validate": "reconciler validate",
        "reconciler-fmt": "reconciler fmt --check",
    }


@pytest.mark.parametrize("hook", HOOKS, ids=[hook["id"] for hook in HOOKS])
def test_a_hook_is_declared_for_pre_commit(hook: dict[str, Any]) -> None:
    assert hook["language"] == "python"  # pre-commit installs this repository (its console script) for it
    assert hook["pass_filenames"] is False  # one PATH, the directory: never one run per changed file
    files = re.compile(hook["files"])
    assert files.search("manifests/teams.yaml") and files.search("a.yml")
    assert not files.search("README.md")
    assert hook["name"] and hook["description"]


@pytest.mark.parametrize("hook", HOOKS, ids=[hook["id"] for hook in HOOKS])
def test_a_hook_entry_passes_on_the_company_example(hook: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    program, *words = shlex.split(hook["entry"])
    assert program == "reconciler"
    code, out, err = run_cli([*words, str(ROOT / "examples" / "company")], capsys)
    assert code == 0, out + err
    assert "Error" not in err
