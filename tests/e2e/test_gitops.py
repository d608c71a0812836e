"""examples/gitops: the README's rehearsal runs as written, the workflow has the
triggers, jobs, permissions and concurrency the README promises, and the
pre-commit hook is declared as documented."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import ROOT, run_cli

GITOPS = ROOT / "examples" / "gitops"
WORKFLOW = GITOPS / ".github" / "workflows" / "access.yml"
README = GITOPS / "README.md"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
# What a run of the pipeline or of the rehearsal leaves behind; never part of the example.
LEFT_BEHIND = shutil.ignore_patterns(".emulator.yaml", "plan.json", "plan.md", "plan.err", "comment.md",
                                     "saved-plan", "*.state.json", "*.state.json.lock")


def walkthrough_blocks(text: str) -> list[str]:
    """The ```sh blocks between the walkthrough markers, in order."""
    start = text.index("<!-- walkthrough:start")
    end = text.index("<!-- walkthrough:end -->", start)
    return re.findall(r"^```sh\n(.*?)^```$", text[start:end], flags=re.S | re.M)


def reconciler_commands(script: str) -> list[list[str]]:
    """Every ``reconciler ...`` command line of a shell script, as words, cut at
    the first redirection or ``||``."""
    commands = []
    for line in script.splitlines():
        line = line.strip()
        if not line.startswith("reconciler "):
            continue
        words = []
        for word in shlex.split(line, comments=True):
            if word in ("||", "&&", "|") or word[:1] in (">", "<") or word[:2] in ("2>", "1>"):
                break
            words.append(word)
        commands.append(words)
    return commands


def without_emulator(words: list[str]) -> list[str]:
    """A command as the workflow runs it: no --emulator FILE, no --seed SEED."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in ("--emulator", "--seed"):
            skip = True
        else:
            out.append(word)
    return out


@pytest.fixture
def workflow() -> dict[Any, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def run_steps(workflow: dict[Any, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(job_id, step) for job_id, job in workflow["jobs"].items() for step in job["steps"] if "run" in step]


# --- the README's rehearsal -------------------------------------------------

def test_the_readme_rehearsal_runs_as_written_and_ends_with_no_changes(tmp_path: Path) -> None:
    blocks = walkthrough_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    work = tmp_path / "access-repo"
    shutil.copytree(GITOPS, work, ignore=LEFT_BEHIND)
    bin_dir = tmp_path / "bin"  # `reconciler` is this interpreter's reconciler, whatever PATH holds
    bin_dir.mkdir()
    shim = bin_dir / "reconciler"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m reconciler "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
    runner_temp = tmp_path / "runner-temp"  # what GitHub's runner sets: every output goes there
    runner_temp.mkdir()
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1", RUNNER_TEMP=str(runner_temp))
    script = "set -eu\n" + "\n".join(blocks)
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    out, err = done.stdout, done.stderr
    assert done.returncode == 0, out + err

    # main before its first apply: only the connection of ws_kickoff, which no state records yet;
    # applied, then nothing to do
    first_plan = out.index("No changes.")
    assert "+ connect to group.acme-onboarding (homepage ws_home)" in out[:first_plan]
    assert "Apply complete: 0 added, 0 changed, 0 removed on 0 access lists; 1 connected" in out[:first_plan]
    # the pull request's plan, rendered for the comment
    comment = (runner_temp / "reconciler" / "plan.md").read_text(encoding="utf-8")
    assert "group.acme-onboarding" in comment
    # the group's list reaches both its workspaces, each declared, so Raj loses both
    assert 'The group\'s list reaches 2 workspaces: ws_home "Acme Onboarding – Home", ws_kickoff "Acme ' \
           'Onboarding – Kickoff".' in comment
    assert "`raj@customer.com` loses collaborator on 2 workspaces" in comment
    assert '| user `raj@customer.com` | ws_kickoff "Acme Onboarding – Kickoff" | loses collaborator |' in comment
    assert "probably" not in comment
    assert "priya@customer.com" in comment and "raj@customer.com" in comment
    assert "manifests/onboarding.yaml:" in comment
    saved = runner_temp / "reconciler" / "plan.json"
    assert f"Saved the plan to {saved}" in err
    assert f"reconciler apply --plan {saved} manifests --emulator .emulator.yaml" in err
    assert not (work / "plan.json").exists() and not (work / "plan.md").exists()  # nothing in the checkout
    # the merge applies it, and the next plan has nothing left to do
    applied = out.index("Apply complete", first_plan)
    assert out.index("No changes.", applied) > applied
    # the same plan again is refused as stale
    assert "refused (exit 1)" in out
    assert "is stale" in err
    # the state the apply job would commit
    assert (work / "manifests" / "reconciler.state.json").exists()
    assert "group.acme-onboarding" in out[out.index("refused (exit 1)"):]


def test_the_readme_runs_the_workflows_validate_plan_and_apply(workflow: dict[Any, Any]) -> None:
    in_readme = [without_emulator(c) for block in walkthrough_blocks(README.read_text(encoding="utf-8"))
                 for c in reconciler_commands(block)]
    in_workflow = [c for _, step in run_steps(workflow) for c in reconciler_commands(step["run"])]
    plan = next(c for c in in_workflow if c[1] == "plan")
    assert plan in in_readme  # the README's markdown plan is the plan job's, but for the emulator
    assert ["reconciler", "validate", "manifests"] in in_readme
    assert any(c[:3] == ["reconciler", "apply", "--plan"] and "--auto-approve" in c for c in in_readme)


# --- the workflow -------------------------------------------------------------

def test_workflow_runs_on_pull_requests_on_pushes_to_main_nightly_monthly_hourly_and_by_hand(
        workflow: dict[Any, Any]) -> None:
    triggers: dict[Any, Any] = workflow["on"] if "on" in workflow else workflow[True]  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"pull_request", "push", "schedule", "workflow_dispatch"}
    assert triggers["schedule"] == [{"cron": "17 3 * * *"}, {"cron": "41 4 1 * *"}, {"cron": "23 6 * * 1"},
                                    {"cron": "29 * * * *"}]
    # By hand: the report unless the directory job is asked for.
    assert triggers["workflow_dispatch"]["inputs"]["job"] == {
        "description": "What to run now", "type": "choice", "options": ["report", "directory"], "default": "report"}
    assert triggers["push"]["branches"] == ["main"]
    assert triggers["pull_request"]["branches"] == ["main"]


def test_workflow_jobs_plan_comment_on_pull_requests_apply_on_push_audit_nightly_report_monthly(
        workflow: dict[Any, Any]) -> None:
    jobs = workflow["jobs"]
    assert set(jobs) == {"plan", "comment", "apply", "audit", "report", "review-status", "directory"}
    # Each schedule runs its own job: the nightly cron the audit, the monthly one (or a run by hand) the report,
    # the hourly one the directory (tests/e2e/test_gitops_directory.py).
    assert jobs["audit"]["if"] == "github.event_name == 'schedule' && github.event.schedule == '17 3 * * *'"
    assert jobs["report"]["if"] == ("(github.event_name == 'schedule' && github.event.schedule == '41 4 1 * *') "
                                    "|| (github.event_name == 'workflow_dispatch' && inputs.job != 'directory')")
    assert "pull_request" in jobs["plan"]["if"]
    assert "pull_request" in jobs["comment"]["if"] and jobs["comment"]["needs"] == "plan"
    assert jobs["apply"]["if"] == "github.event_name == 'push'"


def test_workflow_asks_for_the_least_permissions(workflow: dict[Any, Any]) -> None:
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert jobs["plan"]["permissions"] == {"contents": "read"}
    assert jobs["comment"]["permissions"] == {"pull-requests": "write"}
    assert jobs["apply"]["permissions"] == {"contents": "write", "actions": "read", "pull-requests": "read"}
    assert jobs["audit"]["permissions"] == {"contents": "read"}
    assert jobs["report"]["permissions"] == {"contents": "read", "actions": "read"}
    assert jobs["directory"]["permissions"] == {"contents": "write", "pull-requests": "write"}
    writers = {(job_id, scope) for job_id, job in jobs.items() for scope, level in job["permissions"].items()
               if level == "write"}
    assert writers == {("comment", "pull-requests"), ("apply", "contents"), ("directory", "contents"),
                       ("directory", "pull-requests")}


def test_applies_are_serialized_per_state_file_and_never_cancelled(workflow: dict[Any, Any]) -> None:
    concurrency = workflow["jobs"]["apply"]["concurrency"]
    assert concurrency["cancel-in-progress"] is False
    assert "reconciler.state.json" in concurrency["group"]
    assert "${{" not in concurrency["group"]  # one group for every run, not one per commit


def test_every_reconciler_call_is_a_documented_command(workflow: dict[Any, Any]) -> None:
    calls: dict[str, list[list[str]]] = {}
    for job_id, step in run_steps(workflow):
        calls.setdefault(job_id, []).extend(reconciler_commands(step["run"]))
    every = [c for commands in calls.values() for c in commands]
    assert {c[1] for c in every} == {"validate", "plan", "apply", "audit", "report", "review", "directory"}
    for command in every:
        if command[1] == "plan":
            assert "--format" in command and command[command.index("--format") + 1] == "markdown", command
            assert "--out" in command and command[command.index("--out") + 1].endswith("plan.json"), command
    apply = calls["apply"]
    assert len(apply) == 1 and apply[0][2] == "--plan" and apply[0][3].endswith("plan.json"), apply
    assert apply[0][4] == "manifests", apply
    # Without a pull request only the live directory's removals, which grant nothing (rule 4).
    assert calls["directory"] == [["reconciler", "directory", "pull", "$PULL_URL"],
                                  ["reconciler", "apply", "manifests", "--directory", "live", "--auto-approve"],
                                  ["reconciler", "directory", "sync", "manifests"]]
    assert calls["audit"] == [["reconciler", "audit", "manifests", "--format", "markdown"]]
    assert calls["report"] == [["reconciler", "report", "manifests", "--out", "$RUNNER_TEMP/access-report",
                                "${SINCE:+--since", "$SINCE}"]]
    assert calls.get("comment", []) == []  # the job that can write comments never holds the token


def test_the_comment_is_found_again_by_its_marker_and_edited(workflow: dict[Any, Any]) -> None:
    marker = workflow["env"]["COMMENT_MARKER"]
    assert marker.startswith("<!--") and marker.endswith("-->")
    writes = "\n".join(step["run"] for job_id, step in run_steps(workflow) if job_id == "plan")
    assert 'echo "$COMMENT_MARKER"' in writes  # the comment's first line
    post = "\n".join(step["run"] for job_id, step in run_steps(workflow) if job_id == "comment")
    assert "startswith(\\\"$COMMENT_MARKER\\\")" in post
    assert "--method PATCH" in post and "--method POST" in post


def test_the_token_reaches_only_reconciler_steps_and_is_never_echoed(workflow: dict[Any, Any]) -> None:
    with_service_token = []
    for job_id, step in run_steps(workflow):
        assert "secrets." not in step["run"], (job_id, step.get("name"))
        assert "RECONCILER_TOKEN" not in step["run"], (job_id, step.get("name"))
        secrets = {name for name, value in step.get("env", {}).items() if "secrets." in str(value)}
        if "RECONCILER_TOKEN" in secrets:
            with_service_token.append((job_id, step["name"]))
            assert [c[1] for c in reconciler_commands(step["run"])] in (["plan"], ["apply"], ["audit"], ["report"])
            # The PostgreSQL password of the state (read-only in the plan job), and the approved digest.
            assert {"RECONCILER_TOKEN", "RECONCILER_BASE_URL"} <= set(step["env"]) <= {
                "RECONCILER_TOKEN", "RECONCILER_BASE_URL", "PGPASSWORD", "RECONCILER_EXPECT_DIGEST"}
        elif secrets == {"SYNC_TOKEN"}:  # the git token of the directory's pull request: no reconciler there
            assert (job_id, step["name"]) == ("directory", "Push directory.yaml and open its pull request")
            assert not reconciler_commands(step["run"])
        elif secrets:  # the directory's own: its state's password, the token of the SCIM service pulled from
            assert reconciler_commands(step["run"]), (job_id, step.get("name"))
            assert secrets <= {"PGPASSWORD", "RECONCILER_DIRECTORY_PULL_TOKEN"}, (job_id, step.get("name"))
    assert with_service_token == [("plan", "Plan"), ("apply", "Apply the reviewed plan"),
                                  ("audit", "Audit the whole company"), ("report", "Write the access report"),
                                  ("directory", "Apply the directory's removals")]
    assert "secrets." not in str(workflow.get("env", {}))


def test_the_nightly_audit_fails_the_run_with_the_audits_exit_code(workflow: dict[Any, Any], tmp_path: Path) -> None:
    step = next(s for s in workflow["jobs"]["audit"]["steps"] if "reconciler audit" in s.get("run", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A stand-in for reconciler that prints a report and exits as audit does on findings.
    (bin_dir / "reconciler").write_text("#!/bin/sh\necho '## reconciler audit'\nexit 2\n", encoding="utf-8")
    (bin_dir / "reconciler").chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(tmp_path)}
    done = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert summary.read_text(encoding="utf-8") == "## reconciler audit\n"
    assert (tmp_path / "audit.md").exists()  # under $RUNNER_TEMP, outside the checkout
    assert "::error::The audit found policy violations" in done.stdout


def _report_argv(workflow: dict[Any, Any], tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The arguments the report step gives reconciler (a stand-in that records them)."""
    step = next(s for s in workflow["jobs"]["report"]["steps"] if "reconciler report" in s.get("run", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "reconciler").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', encoding="utf-8")
    (bin_dir / "reconciler").chmod(0o755)
    done = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env, "RUNNER_TEMP": "/runner/temp",
                               "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_monthly_report_compares_with_the_last_report_when_there_is_one(workflow: dict[Any, Any],
                                                                            tmp_path: Path) -> None:
    assert _report_argv(workflow, tmp_path, {"SINCE": "/tmp/last report/access.json"}) == [
        "report", "manifests", "--out", "/runner/temp/access-report", "--since", "/tmp/last report/access.json"]


def test_the_first_report_is_made_without_since(workflow: dict[Any, Any], tmp_path: Path) -> None:
    assert _report_argv(workflow, tmp_path, {"SINCE": ""}) == ["report", "manifests", "--out",
                                                               "/runner/temp/access-report"]


def test_the_report_is_kept_as_an_artifact_the_next_run_finds(workflow: dict[Any, Any]) -> None:
    steps = workflow["jobs"]["report"]["steps"]
    keep = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert keep["with"]["name"] == "access-report" and keep["with"]["path"] == "${{ runner.temp }}/access-report/"
    download = next(s for s in steps if "gh run download" in s.get("run", ""))
    assert "name=access-report" in download["run"] and "--name access-report" in download["run"]


def test_the_merged_state_is_committed_back_naming_the_pull_request(workflow: dict[Any, Any]) -> None:
    steps = workflow["jobs"]["apply"]["steps"]
    commit = next(s for s in steps if "git commit" in s.get("run", ""))
    assert "always()" in commit["if"]  # also after a failed apply: what was done is recorded
    assert "manifests/reconciler.state.json" in commit["run"]
    assert re.search(r'-m "reconciler: state after \$what #\$PR"', commit["run"])


# --- the pre-commit hook ------------------------------------------------------

def test_pre_commit_hook_exposes_reconciler_validate() -> None:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "reconciler-validate")
    assert hook["entry"] == "reconciler validate"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False  # validate takes one directory, not the changed files
    files = re.compile(hook["files"])
    assert files.search("manifests/groups.yaml") and files.search("manifests/portal.yml")
    assert not files.search("manifests/reconciler.state.json")


def test_pre_commit_hook_as_documented_validates_the_example(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    hook = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))[0]
    monkeypatch.chdir(GITOPS)
    code, out, err = run_cli([*hook["entry"].split()[1:], "manifests"], capsys)  # args: [manifests]
    assert code == 0, err
    assert out == ("The manifests in manifests are valid: 1 group with 1 member, 1 standalone workspace, "
                   "2 access lists, 0 assets, 2 files.\n")


def test_the_weekly_review_status_job_posts_each_open_campaign_to_the_summary_and_fails_only_on_errors() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["review-status"]
    assert job["if"] == "github.event_name == 'schedule' && github.event.schedule == '23 6 * * 1'"
    assert job["permissions"] == {"contents": "read"}
    step = next(s for s in job["steps"] if "reconciler review status" in s.get("run", ""))
    assert "env" not in step  # the status reads files only: no token reaches it
    assert '--format markdown >> "$GITHUB_STEP_SUMMARY"' in step["run"]
    assert 'if [ "$code" = 1 ]; then exit 1; fi' in step["run"]
