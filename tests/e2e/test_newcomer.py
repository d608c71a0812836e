"""What a newcomer meets first: help with no arguments, the address `emulator
serve` prints, where `plan --out` saved the plan, the README's pointers, and
a demo that shows a change made in the web app being repaired."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import QUICKSTART, ROOT, TOKEN, run_cli
from tests.waiting import read_line


pytestmark = pytest.mark.usefixtures("no_ambient_connection")


def test_no_arguments_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli([], capsys)
    assert code == 0, err
    assert out.startswith("Usage: reconciler")
    commands = [line.split()[0] for line in out.split("\nCommands:\n", 1)[1].splitlines() if line.strip()]
    assert {"validate", "plan", "apply"} <= set(commands)
    assert "Error" not in err


def test_emulator_serve_prints_the_bare_base_url_on_its_first_line() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "reconciler", "emulator", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = read_line(proc).rstrip("\n")  # within a deadline, failing with what it printed
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first), first
        answer = httpx.get(f"{first}/v1/workspaces", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert answer.status_code == 200  # usable as it is, as RECONCILER_BASE_URL
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_plan_out_says_where_it_saved_and_the_command_that_applies_it(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    emulator = ["--emulator", "emulator.yaml", "--seed", str(project / "seed.yaml")]
    code, out, err = run_cli(["plan", str(project), *emulator, "--out", "plan.json"], capsys)
    assert code == 0, err
    assert "Saved the plan to plan.json" in err
    command = next(line.strip() for line in err.splitlines() if line.strip().startswith("reconciler apply"))
    assert command == f"reconciler apply --plan plan.json {project} --emulator emulator.yaml"
    assert "Saved" not in out  # stdout stays the plan alone (a PR comment, a JSON document)

    code, out, err = run_cli([*shlex.split(command)[1:], "--auto-approve"], capsys)
    assert code == 0, err
    assert "Apply complete" in out


def test_the_saved_plan_wraps_the_json_plan_document(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emulator = ["--emulator", str(tmp_path / "emulator.yaml"), "--seed", str(project / "seed.yaml")]
    code, out, err = run_cli(["plan", str(project), *emulator, "--format", "json", "--out", str(tmp_path / "p.json")],
                             capsys)
    assert code == 0, err
    saved = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert set(saved) == {"kind", "manifest_path", "plan"}
    assert saved["kind"] == "reconciler-plan" and saved["manifest_path"] == str(project)
    assert saved["plan"] == json.loads(out)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '{"kind": "reconciler-plan", "manifest_path":' in " ".join(readme.split())


def test_the_readme_names_the_emulators_token_where_it_explains_the_emulator() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = next(p for p in readme.split("\n\n") if "add `--emulator FILE`" in p)
    assert "dev-token-acme" in paragraph
    serve_row = next(line for line in readme.splitlines() if line.startswith("| `reconciler emulator serve`"))
    assert "dev-token-acme" in serve_row and "first line" in serve_row


def test_the_design_notes_the_readme_points_to_live_in_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    how = readme[readme.index("## How it works"):]
    assert "docs/design.md" in how[:how.index("\n## ", 3)]
    for doc in (ROOT / "README.md", ROOT / "docs" / "design.md", ROOT / "examples" / "gitops" / "README.md"):
        text = doc.read_text(encoding="utf-8")
        assert "../shared" not in text and "DESIGN.md" not in text, doc
        for target in re.findall(r"\]\(([^)#]+)\)", text):
            if "://" in target:
                continue
            resolved = (doc.parent / target).resolve()
            assert resolved.exists() and resolved.is_relative_to(ROOT), (doc, target)


def test_the_demo_repairs_a_change_made_in_the_web_app(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["demo", str(QUICKSTART)], capsys)
    assert code == 0, err
    steps = re.split(r"^\$ ", out, flags=re.M)
    titles = [step.splitlines()[0] for step in steps[1:]]
    web_app = next(i for i, title in enumerate(titles) if "in the web app" in title)
    assert titles[web_app - 1].startswith("reconciler apply")  # after the first apply
    assert titles[web_app + 1].startswith("reconciler plan")
    assert titles[web_app + 2].startswith("reconciler apply")
    assert titles[-1].startswith("reconciler plan") and len(titles) == web_app + 4
    drift_plan = steps[web_app + 2]
    assert "priya@customer.com" in drift_plan  # removed in the web app: the plan grants it again
    assert "added.in.web.app@example.com" in drift_plan and "REMOVED" in drift_plan  # let in: removed again
    assert "Apply complete" in steps[web_app + 3]
    last = steps[-1].split("\n", 1)[1]
    assert last.startswith("No changes.")


def test_the_demo_ignores_a_real_token_in_the_shell(capsys, monkeypatch) -> None:
    monkeypatch.setenv("RECONCILER_TOKEN", "a-real-company-token-1234")
    code, out, err = run_cli(["demo"], capsys)
    assert code == 0, err
    assert "a-real-company-token-1234" not in out + err
