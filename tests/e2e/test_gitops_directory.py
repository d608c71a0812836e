"""The GitOps workflow's directory job (examples/gitops/.github/workflows/access.yml):
every hour, the identity provider's removals are applied at once with
``apply --directory live`` (which never grants: rule 4), one at a time with
the apply job, the state is committed back, and ``directory sync``'s
directory.yaml goes to ONE pull request, so its grants arrive only reviewed.

The steps' bash runs as the runner runs it, in a real git repository whose
origin is a bare repository beside it; ``reconciler`` and ``gh`` are
stand-ins that record what they were asked."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_gitops import WORKFLOW

STATE = "manifests/reconciler.state.json"
DIRECTORY = f"{STATE}.directory.json"
BRANCH = "reconciler/directory-sync"
MAIN_YAML = "groups:\n  Engineering: [ada@acme.com]\n"
CHANGED_YAML = "groups:\n  Engineering: [ada@acme.com, bob@acme.com]\n"
PULL_REQUEST = "Push directory.yaml and open its pull request"


@pytest.fixture
def workflow() -> dict[Any, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


@pytest.fixture
def job(workflow: dict[Any, Any]) -> dict[Any, Any]:
    directory = workflow["jobs"]["directory"]
    assert isinstance(directory, dict)
    return directory


def _step(job: dict[Any, Any], name: str) -> dict[Any, Any]:
    return next(s for s in job["steps"] if s.get("name") == name)


def _index(job: dict[Any, Any], name: str) -> int:
    return next(i for i, s in enumerate(job["steps"]) if s.get("name") == name)


# --- the job as declared ----------------------------------------------------------------------

def test_the_job_runs_hourly_or_by_hand_and_only_where_a_directory_is_set_up(workflow: dict[Any, Any],
                                                                             job: dict[Any, Any]) -> None:
    triggers: dict[Any, Any] = workflow["on"] if "on" in workflow else workflow[True]
    assert {"cron": "29 * * * *"} in triggers["schedule"]  # its own cron, at an odd minute
    assert "directory" in triggers["workflow_dispatch"]["inputs"]["job"]["options"]
    assert job["if"] == ("((github.event_name == 'schedule' && github.event.schedule == '29 * * * *') "
                         "|| (github.event_name == 'workflow_dispatch' && inputs.job == 'directory')) "
                         "&& (vars.RECONCILER_DIRECTORY_PULL_URL != '' || vars.RECONCILER_DIRECTORY_SERVED == 'true')")
    # A run by hand for the directory makes no report (which would become next month's --since).
    assert "inputs.job != 'directory'" in workflow["jobs"]["report"]["if"]


def test_the_job_may_commit_the_state_and_open_a_pull_request_and_nothing_else(job: dict[Any, Any]) -> None:
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}


def test_the_job_applies_in_the_apply_jobs_group_and_is_never_cancelled(workflow: dict[Any, Any],
                                                                        job: dict[Any, Any]) -> None:
    # The same group: a merge's apply and this one never run at once. Never cancelled, and queued
    # (without `queue`, a pending run of one would cancel the other's pending run).
    assert job["concurrency"] == workflow["jobs"]["apply"]["concurrency"]
    assert job["concurrency"] == {"group": "reconciler-apply-manifests/reconciler.state.json",
                                  "cancel-in-progress": False, "queue": "max"}


def test_the_job_pulls_then_applies_then_commits_then_syncs_then_opens_the_pull_request(job: dict[Any, Any]) -> None:
    names = [s.get("name", s.get("uses", "").split("@")[0]) for s in job["steps"]]
    assert names == ["actions/setup-python", "Install reconciler", "actions/checkout", "Choose the state",
                     "Pull the directory from the identity provider", "Apply the directory's removals",
                     "Commit the state and the directory", "Write directory.yaml", PULL_REQUEST]
    checkout = job["steps"][names.index("actions/checkout")]
    assert checkout["with"] == {"ref": "main", "fetch-depth": 0, "persist-credentials": False}


def test_the_apply_is_the_live_directorys_removals_with_the_service_token(job: dict[Any, Any]) -> None:
    apply = _step(job, "Apply the directory's removals")
    assert apply["run"] == "reconciler apply manifests --directory live --auto-approve"
    assert apply["env"] == {"RECONCILER_TOKEN": "${{ secrets.RECONCILER_TOKEN }}",
                            "RECONCILER_BASE_URL": "${{ secrets.RECONCILER_BASE_URL }}",
                            "PGPASSWORD": "${{ secrets.RECONCILER_POSTGRES_PASSWORD }}"}


def test_the_pull_runs_only_with_a_url_its_token_in_the_environment(job: dict[Any, Any]) -> None:
    pull = _step(job, "Pull the directory from the identity provider")
    assert pull["if"] == "vars.RECONCILER_DIRECTORY_PULL_URL != ''"
    assert pull["run"] == 'reconciler directory pull "$PULL_URL"'
    assert pull["env"]["RECONCILER_DIRECTORY_PULL_TOKEN"] == "${{ secrets.RECONCILER_DIRECTORY_PULL_TOKEN }}"
    assert "RECONCILER_TOKEN" not in pull["env"]


def test_only_the_commit_and_pull_request_steps_carry_a_git_token(job: dict[Any, Any]) -> None:
    def has_git_token(step: dict[Any, Any]) -> bool:
        return any(t in str(step.get("env", {})) for t in ("github.token", "RECONCILER_SYNC_TOKEN"))

    assert [s["name"] for s in job["steps"] if has_git_token(s)] == ["Commit the state and the directory",
                                                                     PULL_REQUEST]
    for name in ("Commit the state and the directory", PULL_REQUEST):
        assert "::add-mask::" in _step(job, name)["run"]
    push = _step(job, PULL_REQUEST)
    assert push["env"] == {"SYNC_TOKEN": "${{ secrets.RECONCILER_SYNC_TOKEN }}",
                           "WORKFLOW_TOKEN": "${{ github.token }}", "BRANCH": BRANCH}
    assert "isCrossRepository | not" in push["run"]  # never a fork's pull request from a branch of that name


def test_the_state_commit_is_the_apply_jobs_push_copied(workflow: dict[Any, Any], job: dict[Any, Any]) -> None:
    """GitHub takes YAML anchors now, but zizmor reads them best-effort only: the two copies stay equal."""
    ours = _step(job, "Commit the state and the directory")["run"].splitlines()
    theirs = next(s for s in workflow["jobs"]["apply"]["steps"] if s.get("name") == "Commit the state file")
    theirs_lines = theirs["run"].splitlines()
    assert ours[:4] == theirs_lines[:4]  # the credential, per command, masked
    loop = theirs_lines.index("# A merge may have landed meanwhile; only the apply and directory jobs write the state,")
    assert ours[-8:] == theirs_lines[loop:]
    assert "always()" in theirs["if"] and "always()" in _step(job, "Commit the state and the directory")["if"]


def test_the_sync_is_skipped_when_the_state_could_not_be_committed(job: dict[Any, Any]) -> None:
    # A branch carrying a state commit main never got would be a pull request that changes the state.
    sync = _step(job, "Write directory.yaml")
    assert "steps.commit.outcome != 'failure'" in sync["if"] and "steps.pull.outcome != 'failure'" in sync["if"]
    assert "!cancelled()" in sync["if"]
    assert _step(job, PULL_REQUEST)["if"] == "steps.sync.outcome == 'success'"


# --- the steps, run ---------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


FAKE_RECONCILER = r"""#!/bin/bash
# directory sync, as the real one: writes the file (when it changes) and says what changed.
echo "reconciler $*" >> "$CALLS"
[ "$*" = "directory sync manifests" ] || { echo "unexpected reconciler $*" >&2; exit 2; }
printf '%s' "$NEW_DIRECTORY" > manifests/directory.yaml
echo "$SYNC_SAYS"
"""

FAKE_GH = r"""#!/bin/bash
# gh, answering through the step's --jq as GitHub's API would.
echo "gh $* (token $GH_TOKEN)" >> "$CALLS"
case "$1 $2" in
  "pr list") if [ -n "$OPEN_PR" ]; then echo "$OPEN_PR"; fi ;;
  "pr create") echo "https://github.com/acme/access/pull/12" ;;
  "pr edit"|"pr close") ;;
  *) echo "unexpected gh $*" >&2; exit 2 ;;
esac
"""


class Runner:
    """main checked out from a bare origin, stand-ins on PATH, the runner's files."""

    def __init__(self, tmp_path: Path) -> None:
        self.origin = tmp_path / "origin.git"
        self.repo = tmp_path / "checkout"
        self.temp = tmp_path / "runner-temp"
        self.calls = tmp_path / "calls"
        self.env_file, self.output_file = tmp_path / "github-env", tmp_path / "github-output"
        for path in (self.temp, self.repo / "manifests"):
            path.mkdir(parents=True)
        for path in (self.calls, self.env_file, self.output_file):
            path.touch()
        _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.origin))
        _git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "manifests" / "access.yaml").write_text("version: 1\n")
        (self.repo / "manifests" / "directory.yaml").write_text(MAIN_YAML)
        _git(self.repo, "add", ".")
        _git(self.repo, "commit", "-qm", "main")
        _git(self.repo, "remote", "add", "origin", str(self.origin))
        _git(self.repo, "push", "-q", "origin", "main")
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        for name, text in (("reconciler", FAKE_RECONCILER), ("gh", FAKE_GH)):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)

    def __call__(self, script: str, **env: str) -> subprocess.CompletedProcess[str]:
        full = {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}", "CALLS": str(self.calls),
                "RUNNER_TEMP": str(self.temp), "GITHUB_ENV": str(self.env_file),
                "GITHUB_OUTPUT": str(self.output_file), "GITHUB_REPOSITORY": "acme/access", "GITHUB_RUN_ID": "4711",
                "GITHUB_SERVER_URL": "https://github.com", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CONFIG_SYSTEM": os.devnull, **env}
        # As GitHub runs `shell: bash`.
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=self.repo,
                              env=full, capture_output=True, text=True, timeout=60)

    def sync_and_pull_request(self, job: dict[Any, Any], new: str, *, open_pr: str = "",
                              sync_token: str = "sync-token") -> subprocess.CompletedProcess[str]:
        """The two last steps, as the job runs them one after the other."""
        env = {"NEW_DIRECTORY": new, "SYNC_SAYS": "+ Engineering: bob@acme.com", "OPEN_PR": open_pr,
               "PGPASSWORD": "", "SYNC_TOKEN": sync_token, "WORKFLOW_TOKEN": "workflow-token",
               "BRANCH": _step(job, PULL_REQUEST)["env"]["BRANCH"]}
        sync = self(_step(job, "Write directory.yaml")["run"], **env)
        assert sync.returncode == 0, sync.stdout + sync.stderr
        return self(_step(job, PULL_REQUEST)["run"], **env)

    def gh_calls(self) -> list[str]:
        return [line for line in self.calls.read_text().splitlines() if line.startswith("gh ")]

    def branch(self) -> str | None:
        done = subprocess.run(["git", "--git-dir", str(self.origin), "rev-parse", "--quiet", "--verify",
                               f"refs/heads/{BRANCH}"], capture_output=True, text=True, timeout=60)
        return done.stdout.strip() or None

    def on_origin(self, ref: str, path: str) -> str:
        return _git(self.origin, "show", f"{ref}:{path}")


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


def test_no_change_pushes_nothing_and_opens_no_pull_request(job: dict[Any, Any], runner: Runner) -> None:
    done = runner.sync_and_pull_request(job, MAIN_YAML)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "manifests/directory.yaml is main's: nothing to review." in done.stdout
    assert runner.branch() is None
    assert [c.split(" (")[0].split(" --")[0] for c in runner.gh_calls()] == ["gh pr list"]


def test_a_change_is_pushed_to_the_branch_and_its_pull_request_opened(job: dict[Any, Any], runner: Runner) -> None:
    main = _git(runner.repo, "rev-parse", "HEAD")

    done = runner.sync_and_pull_request(job, CHANGED_YAML)

    assert done.returncode == 0, done.stdout + done.stderr
    assert runner.on_origin(BRANCH, "manifests/directory.yaml") == CHANGED_YAML.rstrip("\n")
    assert _git(runner.origin, "rev-parse", f"{BRANCH}^") == main  # one commit on main: only directory.yaml
    assert _git(runner.origin, "diff", "--name-only", "main", BRANCH) == "manifests/directory.yaml"
    assert runner.on_origin("main", "manifests/directory.yaml") == MAIN_YAML.rstrip("\n")  # main untouched
    calls = runner.gh_calls()
    assert len(calls) == 2 and calls[0].startswith("gh pr list --repo acme/access --head reconciler/directory-sync "
                                                   "--base main --state open")
    assert calls[1].startswith("gh pr create --repo acme/access --base main --head reconciler/directory-sync "
                               "--title reconciler: directory sync from the identity provider --body-file ")
    assert calls[1].endswith("(token sync-token)")  # a token whose pull request starts the plan job
    body = (runner.temp / "reconciler" / "directory-pr.md").read_text()
    assert "```text\n+ Engineering: bob@acme.com\n```" in body
    assert "::warning::" not in done.stdout


def test_a_change_with_its_pull_request_open_updates_it_and_opens_no_second(job: dict[Any, Any],
                                                                           runner: Runner) -> None:
    _git(runner.repo, "push", "-q", "origin", f"main:refs/heads/{BRANCH}")  # an older change's branch

    done = runner.sync_and_pull_request(job, CHANGED_YAML, open_pr="12")

    assert done.returncode == 0, done.stdout + done.stderr
    assert runner.on_origin(BRANCH, "manifests/directory.yaml") == CHANGED_YAML.rstrip("\n")  # force-pushed
    calls = [c.split(" --")[0] for c in runner.gh_calls()]
    assert calls == ["gh pr list", "gh pr edit 12"]
    assert "Pull request #12 shows it." in done.stdout


def test_the_same_change_again_is_not_pushed_again(job: dict[Any, Any], runner: Runner) -> None:
    """Each push restarts the plan and dismisses the reviewers' approvals: an hourly run must not."""
    runner.sync_and_pull_request(job, CHANGED_YAML)
    pushed = runner.branch()
    _git(runner.repo, "reset", "-q", "--hard", "origin/main")  # the next run's fresh checkout of main

    done = runner.sync_and_pull_request(job, CHANGED_YAML, open_pr="12")

    assert done.returncode == 0, done.stdout + done.stderr
    assert runner.branch() == pushed
    assert "reconciler/directory-sync already holds this manifests/directory.yaml." in done.stdout
    assert [c.split(" --")[0] for c in runner.gh_calls()][2:] == ["gh pr list"]


def test_a_change_undone_in_the_identity_provider_closes_its_pull_request(job: dict[Any, Any],
                                                                         runner: Runner) -> None:
    # Merged, it would grant what the identity provider took back.
    done = runner.sync_and_pull_request(job, MAIN_YAML, open_pr="12")

    assert done.returncode == 0, done.stdout + done.stderr
    assert [c.split(" --")[0] for c in runner.gh_calls()] == ["gh pr list", "gh pr close 12"]
    assert runner.branch() is None


def test_without_the_sync_token_the_workflow_token_opens_it_and_says_the_plan_will_not_run(
        job: dict[Any, Any], runner: Runner) -> None:
    done = runner.sync_and_pull_request(job, CHANGED_YAML, sync_token="")

    assert done.returncode == 0, done.stdout + done.stderr
    assert ("::warning::RECONCILER_SYNC_TOKEN is not set, so the workflow's own token pushes and opens the pull "
            "request, and GitHub starts no workflow for what that token does: the plan job will not run on it") \
        in done.stdout
    assert runner.gh_calls()[-1].startswith("gh pr create") and runner.gh_calls()[-1].endswith("(token workflow-token)")


def test_the_state_and_the_directory_beside_it_are_committed_to_main(job: dict[Any, Any], runner: Runner) -> None:
    (runner.repo / STATE).write_text('{"serial": 1}\n')
    (runner.repo / DIRECTORY).write_text('{"users": []}\n')

    done = runner(_step(job, "Commit the state and the directory")["run"], GH_TOKEN="workflow-token")

    assert done.returncode == 0, done.stdout + done.stderr
    assert _git(runner.origin, "log", "-1", "--format=%s", "main") == "reconciler: state after the directory's removals"
    assert _git(runner.origin, "diff", "--name-only", "main^", "main").splitlines() == [STATE, DIRECTORY]
    assert re.search(r"^::add-mask::\S+$", done.stdout, re.M)

    again = runner(_step(job, "Commit the state and the directory")["run"], GH_TOKEN="workflow-token")
    assert "The state did not change." in again.stdout


@pytest.mark.parametrize(("postgres", "pull_url", "history", "exported", "kind"), [
    ("postgresql://ci@db/access", "", False, {"RECONCILER_STATE": "postgresql://ci@db/access"}, "postgresql"),
    ("", "https://idp.example/scim/v2", False, {"RECONCILER_STATE": STATE}, "file"),
    ("", "https://idp.example/scim/v2", True, {"RECONCILER_STATE": STATE, "RECONCILER_REQUIRE_STATE": "1"}, "file"),
])
def test_the_state_is_postgresql_or_the_committed_file_required_once_main_has_one(
        job: dict[Any, Any], runner: Runner, postgres: str, pull_url: str, history: bool,
        exported: dict[str, str], kind: str) -> None:
    if history:
        (runner.repo / STATE).write_text('{"serial": 1}\n')
        _git(runner.repo, "add", STATE)
        _git(runner.repo, "commit", "-qm", "reconciler: state after applying #1")

    done = runner(_step(job, "Choose the state")["run"], POSTGRES_STATE=postgres, PULL_URL=pull_url)

    assert done.returncode == 0, done.stdout + done.stderr
    assert dict(line.split("=", 1) for line in runner.env_file.read_text().splitlines()) == exported
    assert runner.output_file.read_text() == f"kind={kind}\n"


def test_a_served_directory_without_postgresql_is_refused(job: dict[Any, Any], runner: Runner) -> None:
    done = runner(_step(job, "Choose the state")["run"], POSTGRES_STATE="", PULL_URL="")

    assert done.returncode == 1
    assert "::error::RECONCILER_DIRECTORY_SERVED is set but RECONCILER_POSTGRES_STATE is not" in done.stdout
    assert runner.env_file.read_text() == ""


def test_a_directory_file_that_is_a_link_is_refused(job: dict[Any, Any], runner: Runner) -> None:
    (runner.repo / DIRECTORY).symlink_to("/dev/null")

    done = runner(_step(job, "Choose the state")["run"], POSTGRES_STATE="", PULL_URL="https://idp.example/scim/v2")

    assert done.returncode == 1
    assert f"::error::{DIRECTORY} is a symbolic link in the checkout; nothing was applied." in done.stdout
