"""The GitOps workflow (examples/gitops/.github/workflows/access.yml) against
what a pull request can do to it: zizmor finds nothing (offline, with its
default and its pedantic persona), every action is pinned to a commit, pip
never imports a module the pull request adds, no checkout leaves a git
credential on disk, the apply job takes a plan only from this workflow's own
run on this repository's merged head, and the state is required once main
has one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_gitops import WORKFLOW

ZIZMOR = Path(sys.executable).parent / "zizmor"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


@pytest.fixture
def workflow() -> dict[Any, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def zizmor(path: Path, persona: str, cache: Path) -> list[dict[str, Any]]:
    """zizmor's findings on ``path``, offline: a proxy that leads nowhere makes
    any attempt to reach the network fail the run instead of passing quietly."""
    if not ZIZMOR.exists():
        pytest.fail(f"zizmor is not installed beside {sys.executable}: pip install -e '.[test]'")
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")}
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", NO_COLOR="1")
    done = subprocess.run([str(ZIZMOR), "--offline", "--no-config", f"--persona={persona}", "--format=json",
                           f"--cache-dir={cache}", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode in (0, *range(10, 15)), done.stderr  # 10-14: findings, by their highest severity
    findings = json.loads(done.stdout)
    assert isinstance(findings, list)
    return findings


@pytest.mark.parametrize("persona", ["regular", "pedantic"])  # regular: zizmor's default
def test_zizmor_finds_nothing_in_the_workflow(persona: str, tmp_path: Path) -> None:
    findings = zizmor(WORKFLOW, persona, tmp_path)
    assert [(f["ident"], f["desc"]) for f in findings] == []


def test_zizmor_as_run_here_does_report_an_unpinned_action(tmp_path: Path) -> None:
    # The check above can fail: the same run finds the tag-pinned checkout this workflow used to have.
    weakened = tmp_path / "access.yml"
    text = WORKFLOW.read_text(encoding="utf-8")
    weakened.write_text(text.replace("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
                                     "actions/checkout@v4", 1), encoding="utf-8")
    idents = {f["ident"] for f in zizmor(weakened, "regular", tmp_path / "cache")}
    assert "unpinned-uses" in idents


def test_every_action_is_pinned_to_a_commit_with_its_version_in_a_comment() -> None:
    uses = [line.split("uses:", 1)[1].strip() for line in WORKFLOW.read_text(encoding="utf-8").splitlines()
            if re.match(r"\s*(- )?uses:", line)]
    assert len(uses) == 16
    assert [u for u in uses if not PINNED.match(u)] == []


def test_every_checkout_keeps_no_git_credential(workflow: dict[Any, Any]) -> None:
    checkouts = [step for job in workflow["jobs"].values() for step in job["steps"]
                 if step.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 6
    assert all(step["with"]["persist-credentials"] is False for step in checkouts)


def test_pip_is_installed_before_the_checkout_from_the_runners_temp(workflow: dict[Any, Any]) -> None:
    for job_id in ("plan", "apply", "audit", "review-status", "report", "directory"):
        steps = workflow["jobs"][job_id]["steps"]
        install = next(i for i, s in enumerate(steps) if "pip install" in s.get("run", ""))
        checkout = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/checkout@"))
        assert install < checkout, job_id
        assert steps[install]["run"].startswith('cd "$RUNNER_TEMP" && python -P -m pip install'), job_id


def test_the_install_step_does_not_import_a_pip_py_the_pull_request_adds(workflow: dict[Any, Any],
                                                                        tmp_path: Path) -> None:
    checkout, runner_temp = tmp_path / "checkout", tmp_path / "runner-temp"
    checkout.mkdir()
    runner_temp.mkdir()
    marker = tmp_path / "pwned"
    (checkout / "pip.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    env = {**os.environ, "RUNNER_TEMP": str(runner_temp), "RECONCILER_PIP": "--help",  # pip prints its help, installs nothing
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # The attack is real: `python -m pip` run in the checkout imports the pull request's pip.py.
    subprocess.run([sys.executable, "-m", "pip", "--version"], cwd=checkout, env=env, capture_output=True, timeout=120)
    assert marker.exists()
    marker.unlink()
    script = next(s["run"] for s in workflow["jobs"]["plan"]["steps"] if "pip install" in s.get("run", ""))
    done = subprocess.run(["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install [options]" in done.stdout
    assert not marker.exists()


def test_the_apply_job_takes_a_plan_only_from_this_workflows_run_on_the_merged_head(
        workflow: dict[Any, Any]) -> None:
    steps = workflow["jobs"]["apply"]["steps"]
    download = next(s for s in steps if s.get("id") == "pr")["run"]
    assert ".head_repository.full_name == $repo" in download  # not a fork's run
    assert ".path == $path" in download and "GITHUB_WORKFLOW_REF" in download  # this file, not one a PR added
    assert ".head_sha == $head" in download and '.event == "pull_request"' in download
    assert '--dir "$RUNNER_TEMP/reconciler"' in download  # outside the checkout
    apply = next(s for s in steps if s.get("id") == "apply")
    # PATH named: the saved plan must have been made from it, and decides nothing itself.
    assert apply["run"] == 'reconciler apply --plan "$RUNNER_TEMP/reconciler/plan.json" manifests --auto-approve'
    assert apply["env"]["RECONCILER_EXPECT_DIGEST"] == "${{ steps.pr.outputs.digest }}"


def test_the_state_is_required_once_main_has_one(workflow: dict[Any, Any]) -> None:
    for job_id in ("plan", "apply", "directory"):
        steps = workflow["jobs"][job_id]["steps"]
        decide = next(i for i, s in enumerate(steps) if "RECONCILER_REQUIRE_STATE=1" in s.get("run", ""))
        runs = next(i for i, s in enumerate(steps) if re.search(r"^reconciler (plan|apply)", s.get("run", ""), re.M))
        assert decide < runs, job_id
        assert "manifests/reconciler.state.json" in steps[decide]["run"]


def test_only_the_push_step_authenticates_git(workflow: dict[Any, Any]) -> None:
    steps = workflow["jobs"]["apply"]["steps"]
    with_token = [s.get("name") for s in steps if "github.token" in str(s.get("env", {}))]
    assert with_token == ["Download the merged pull request's plan", "Commit the state file"]
    push = next(s for s in steps if s.get("name") == "Commit the state file")["run"]
    assert "remote push origin HEAD:main" in push and "::add-mask::" in push


def test_the_report_compares_only_with_a_report_this_repositorys_main_made(workflow: dict[Any, Any]) -> None:
    # A fork's pull request can upload an artifact named access-report too: it must never be the baseline.
    download = next(s for s in workflow["jobs"]["report"]["steps"] if "gh run download" in s.get("run", ""))
    assert '.workflow_run.head_branch == \\"main\\"' in download["run"]
    assert ".workflow_run.head_repository_id == $GITHUB_REPOSITORY_ID" in download["run"]
    assert download["env"] == {"GH_TOKEN": "${{ github.token }}"}  # no service token in the step that downloads
