"""What the package ships for use outside a checkout, and the repository's copies of it.

The quickstart lives twice: ``reconciler/quickstart/`` (package data, what
``reconciler demo`` runs after a plain ``pip install``) and
``examples/quickstart/`` (what the README walks through). The schemas live
once, in the models: ``reconciler schema`` generates them, as
``schemas/*.json`` and the examples' ``manifest.schema.json`` are generated.
These tests fail the moment a copy drifts, naming the command that repairs it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reconciler.manifest.schema import manifest_json_schema_text
from reconciler.plan.schema import plan_json_schema_text
from tests.e2e.conftest import ROOT, run_cli

MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
EXAMPLE_MANIFESTS = sorted(p for p in (ROOT / "examples").rglob("*.yaml") if p.name != "seed.yaml")


@pytest.mark.parametrize("manifest", [p for p in EXAMPLE_MANIFESTS if MODELINE.match(p.read_text(encoding="utf-8").split("\n")[0])],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_an_examples_schema_modeline_names_a_file_beside_it_so_it_survives_a_copy(manifest: Path) -> None:
    target = MODELINE.match(manifest.read_text(encoding="utf-8").split("\n")[0]).group(1)  # type: ignore[union-attr]
    assert "/" not in target and "\\" not in target, target
    assert (manifest.parent / target).read_text(encoding="utf-8") == manifest_json_schema_text(), (
        f"{(manifest.parent / target).relative_to(ROOT)} is out of date; regenerate it with: "
        f"reconciler schema manifest > {(manifest.parent / target).relative_to(ROOT)}")


def test_the_examples_with_a_modeline_are_the_quickstart_and_onboarding() -> None:
    # Guards the test above against passing on nothing (a modeline reworded out of the pattern).
    with_modeline = {p.relative_to(ROOT).as_posix() for p in EXAMPLE_MANIFESTS
                     if MODELINE.match(p.read_text(encoding="utf-8").split("\n")[0])}
    assert with_modeline == {"examples/quickstart/manifest.yaml", "examples/onboarding/assets.yaml",
                             "examples/onboarding/groups.yaml", "examples/onboarding/workspaces.yaml"}


def test_schema_prints_the_manifest_schema_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["schema"], capsys)
    assert code == 0, err
    assert out == manifest_json_schema_text() == (ROOT / "schemas" / "manifest.schema.json").read_text("utf-8")
    assert json.loads(out)["title"] == "Workspace reconciler manifest"


def test_schema_plan_prints_the_plan_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["schema", "plan"], capsys)
    assert code == 0, err
    assert out == plan_json_schema_text() == (ROOT / "schemas" / "plan.schema.json").read_text("utf-8")


def test_schema_of_an_unknown_kind_exits_1_naming_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["schema", "state"], capsys)
    assert code == 1
    assert out == ""
    assert "'state' is not one of 'manifest', 'plan'" in err


def test_schema_help_explains_the_editor_set_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema", "--help"], capsys)
    assert code == 0
    assert "reconciler schema manifest > manifest.schema.json" in out
    assert "# yaml-language-server: $schema=manifest.schema.json" in out
