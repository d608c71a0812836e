"""What the package ships for use outside a checkout, and the repository's copies of it.

Every example ships in the wheel as ``reconciler/examples/`` (pyproject.toml
maps the repository's examples/ there, no copy), and ``reconciler demo NAME``
finds it by name. The schemas live once, in the models: ``reconciler schema``
generates them, as ``schemas/*.json`` and the examples' ``manifest.schema.json``
are generated. These tests fail the moment a copy drifts, naming the command
that repairs it.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from reconciler.commands.demo import bundled_examples
from reconciler.manifest.schema import manifest_json_schema_text
from reconciler.plan.schema import plan_json_schema_text
from tests.e2e.conftest import QUICKSTART, ROOT, run_cli

BUNDLED_QUICKSTART = bundled_examples() / "quickstart"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
EXAMPLE_MANIFESTS = sorted(p for p in (ROOT / "examples").rglob("*.yaml") if p.name != "seed.yaml")


def test_in_a_checkout_the_shipped_examples_are_the_repositorys() -> None:
    assert bundled_examples() == ROOT / "examples" and BUNDLED_QUICKSTART == QUICKSTART


def test_every_package_of_reconciler_is_listed_in_pyproject() -> None:
    """pyproject.toml lists the packages (examples/ is mapped in, which a search would not find):
    a package missing there would be missing from the wheel. An example's directory with a name Python
    could import is listed too, or setuptools warns that it "would be ignored" (issue 41 item 1)."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "reconciler").rglob("__init__.py")}
    examples = {".".join(("reconciler", *d.relative_to(ROOT).parts)) for d in (ROOT / "examples").rglob("*")
                if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir())
                and all(part.isidentifier() for part in d.relative_to(ROOT).parts)}
    assert listed == found | examples | {"reconciler.examples"}


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir()))
def test_every_example_has_a_readme(example: str) -> None:
    readme = ROOT / "examples" / example / "README.md"
    assert readme.is_file() and readme.read_text(encoding="utf-8").startswith("# ")


@pytest.mark.parametrize("manifest", [p for p in EXAMPLE_MANIFESTS if MODELINE.match(p.read_text(encoding="utf-8").split("\n")[0])],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_an_examples_schema_modeline_names_a_file_beside_it_so_it_survives_a_copy(manifest: Path) -> None:
    target = MODELINE.match(manifest.read_text(encoding="utf-8").split("\n")[0]).group(1)  # type: ignore[union-attr]
    assert "/" not in target and "\\" not in target, target
    assert (manifest.parent / target).read_text(encoding="utf-8") == manifest_json_schema_text(), (
        f"{(manifest.parent / target).relative_to(ROOT)} is out of date; regenerate it with: "
        f"reconciler schema manifest > {(manifest.parent / target).relative_to(ROOT)}")


def test_the_examples_with_a_modeline_are_the_quickstart_onboarding_and_company() -> None:
    # Guards the test above against passing on nothing (a modeline reworded out of the pattern).
    with_modeline = {p.relative_to(ROOT).as_posix() for p in EXAMPLE_MANIFESTS
                     if MODELINE.match(p.read_text(encoding="utf-8").split("\n")[0])}
    assert with_modeline == {"examples/quickstart/manifest.yaml", "examples/onboarding/assets.yaml",
                             "examples/onboarding/groups.yaml", "examples/onboarding/workspaces.yaml",
                             "examples/company/customers.yaml", "examples/company/rules.yaml",
                             "examples/company/teams.yaml", "examples/directory/manifests/customers.yaml",
                             "examples/directory/manifests/rules.yaml", "examples/directory/manifests/teams.yaml"}


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


SCHEMA_FILES = sorted(p.name for p in (ROOT / "schemas").glob("*.json"))


def _cited_schemas() -> set[str]:
    """Every schemas/*.json file the README, docs/ and the examples' READMEs name."""
    texts = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("README.md")]
    return {name for text in texts for name in re.findall(r"schemas/([a-z-]+\.schema\.json)",
                                                          text.read_text(encoding="utf-8"))}


def test_every_schema_the_docs_cite_is_in_schemas_and_listed_by_schema_list(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 3: the review schemas the README cites were in schemas/ but not in 'reconciler schema'."""
    cited = _cited_schemas()
    assert {"review-campaign.schema.json", "review-decisions.schema.json", "access-report.schema.json"} <= cited
    assert cited <= set(SCHEMA_FILES)
    code, out, err = run_cli(["schema", "--list"], capsys)
    assert code == 0, err
    listed = dict(re.findall(r"^(\S+) +schemas/(\S+) ", out, re.MULTILINE))
    assert sorted(listed.values()) == SCHEMA_FILES, out


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_schema_prints_each_committed_schema_as_generated(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema", "--list"], capsys)
    kind = next(line.split()[0] for line in out.splitlines() if line.split()[1] == f"schemas/{name}")
    code, out, err = run_cli(["schema", kind], capsys)
    assert code == 0, err
    assert out == (ROOT / "schemas" / name).read_text(encoding="utf-8"), (
        f"schemas/{name} is out of date; regenerate it with: reconciler schema {kind} > schemas/{name}")


def test_schema_help_explains_the_editor_set_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema", "--help"], capsys)
    assert code == 0
    assert "reconciler schema manifest > manifest.schema.json" in out
    assert "# yaml-language-server: $schema=manifest.schema.json" in out


def _last_step(out: str) -> str:
    return out.rsplit("\n$ reconciler plan ", 1)[1].split("\n", 1)[1]


def test_demo_without_path_outside_a_checkout_runs_the_bundled_quickstart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    code, out, err = run_cli(["demo"], capsys)
    assert code == 0, err
    assert out.startswith(f"$ reconciler validate {BUNDLED_QUICKSTART}\n")
    assert f"({BUNDLED_QUICKSTART / 'manifest.yaml'}:11)" in out
    assert _last_step(out).startswith("No changes.")
    assert list(tmp_path.iterdir()) == []  # nothing left in the current directory


def test_demo_without_path_in_a_checkout_runs_examples_quickstart_as_the_readme_shows(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    code, out, err = run_cli(["demo"], capsys)
    assert code == 0, err
    assert out.startswith("$ reconciler validate examples/quickstart\n")
    assert "(examples/quickstart/manifest.yaml:11)" in out  # as in the README's demo output
    assert _last_step(out).startswith("No changes.")


def test_demo_finds_a_shipped_example_by_name_from_any_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    code, out, err = run_cli(["demo", "company"], capsys)
    assert code == 0, err
    assert out.startswith(f"$ reconciler validate {bundled_examples() / 'company'}\n")
    assert _last_step(out).startswith("No changes.")
    assert list(tmp_path.iterdir()) == []


def test_demo_of_examples_slash_name_outside_a_checkout_finds_the_shipped_example(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # as the README writes it, where there is no examples/ directory
    code, out, err = run_cli(["demo", "examples/gitops"], capsys)
    assert code == 0, err
    assert out.startswith(f"$ reconciler validate {bundled_examples() / 'gitops' / 'manifests'}\n")
    assert _last_step(out).startswith("No changes.")


def test_demo_of_an_unknown_name_lists_the_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["demo", "compnay"], capsys)
    assert (code, out) == (1, "")
    assert err == ("Error: compnay: no such file or directory, and no example of reconciler is named so. The examples "
                   "shipped are company, directory, gitops, onboarding, quickstart, review ('reconciler demo NAME' runs one from any "
                   "directory); or give the path of your own manifests.\n")
