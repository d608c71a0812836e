"""The committed plan JSON Schema is what the models generate, and what
``reconciler plan --format json`` really writes validates against it."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reconciler.plan.schema import plan_json_schema, plan_json_schema_text
from tests.e2e.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "schemas" / "plan.schema.json"
REGENERATE = "python -m reconciler.plan.schema > schemas/plan.schema.json"
ONBOARDING = REPO / "examples" / "onboarding"


def test_committed_plan_schema_matches_the_models() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == plan_json_schema_text(), (
        f"{COMMITTED.relative_to(REPO)} is out of date with reconciler/plan/model.py; "
        f"regenerate it with: {REGENERATE}"
    )


def test_plan_schema_names_its_dialect_and_title() -> None:
    schema = plan_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "reconciler plan (format_version 3)"
    Draft202012Validator.check_schema(schema)


def test_module_prints_the_plan_schema() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "reconciler.plan.schema"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout == plan_json_schema_text()


@pytest.fixture
def onboarding_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The JSON plan of examples/onboarding, planned by the CLI against a fresh emulator.

    The example is copied first, so no state or emulator file lands in the repository.
    """
    project = tmp_path / "onboarding"
    shutil.copytree(ONBOARDING, project)
    code, out, err = run_cli(
        ["plan", str(project), "--emulator", str(tmp_path / "emu.yaml"), "--seed", str(project / "seed.yaml"),
         "--state", str(tmp_path / "s.json"), "--format", "json"],
        capsys,
    )
    assert code == 0, err
    return json.loads(out)


def _errors(document: dict[str, Any]) -> list[str]:
    validator = Draft202012Validator(json.loads(COMMITTED.read_text(encoding="utf-8")))
    return [error.message for error in validator.iter_errors(document)]


def test_a_real_plan_validates_against_the_committed_schema(onboarding_plan: dict[str, Any]) -> None:
    # The example plans every kind of change, so every branch of the schema is exercised.
    assert {c["kind"] for c in onboarding_plan["changes"]} == {"access", "connect", "create", "section", "page", "task", "asset"}
    assert _errors(onboarding_plan) == []


def test_a_change_of_an_unknown_kind_fails_validation(onboarding_plan: dict[str, Any]) -> None:
    document = copy.deepcopy(onboarding_plan)
    document["changes"][0]["kind"] = "frobnicate"
    assert _errors(document) != []


def test_a_format_version_given_as_a_string_fails_validation(onboarding_plan: dict[str, Any]) -> None:
    document = copy.deepcopy(onboarding_plan)
    document["format_version"] = "2"
    assert _errors(document) != []


def test_an_unknown_field_on_a_change_fails_validation(onboarding_plan: dict[str, Any]) -> None:
    document = copy.deepcopy(onboarding_plan)
    document["changes"][0]["undo"] = True
    assert _errors(document) != []
