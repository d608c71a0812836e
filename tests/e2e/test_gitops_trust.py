"""The GitOps workflow trusts nothing a pull request controls: the shell steps
of examples/gitops/.github/workflows/access.yml, run with bash as the runner
runs them, in a real git repository whose checkout is the merge commit of a
pull request (first parent: the base branch, as GitHub makes it).

- The plan reads the base branch's state (or PostgreSQL), never the pull
  request's; a pull request that changes the state file fails the check.
- A link where the state goes is refused; every output is written under
  ``$RUNNER_TEMP``, so a ``plan.md`` the pull request commits as a link to
  /dev/null cannot empty the comment.
- The apply job requires the digest of the last plan comment made for the
  merged head (``gh`` is a stand-in that answers as GitHub's API would
  through ``--jq``; ``jq`` and ``bash`` are real).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_gitops import WORKFLOW

STATE = "manifests/reconciler.state.json"
MARKER = "<!-- reconciler-plan: manifests -->"
DIGEST = "ab" * 32
HEAD = "1234567890abcdef1234567890abcdef12345678"


def _step(job: str, *, name: str | None = None, step_id: str | None = None) -> dict[str, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return next(s for s in doc["jobs"][job]["steps"] if (name and s.get("name") == name)
                or (step_id and s.get("id") == step_id))


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


class Run:
    """A runner's files for one step: $RUNNER_TEMP, $GITHUB_ENV, $GITHUB_OUTPUT."""

    def __init__(self, tmp_path: Path) -> None:
        self.temp = tmp_path / "runner-temp"
        self.temp.mkdir()
        self.env_file, self.output_file = tmp_path / "github-env", tmp_path / "github-output"
        self.env_file.touch()
        self.output_file.touch()

    def __call__(self, script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
        full = {**os.environ, "RUNNER_TEMP": str(self.temp), "GITHUB_ENV": str(self.env_file),
                "GITHUB_OUTPUT": str(self.output_file), "GITHUB_STEP_SUMMARY": os.devnull,
                "COMMENT_MARKER": MARKER, "GIT_CONFIG_GLOBAL": os.devnull, **env}
        return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=full, capture_output=True, text=True,
                              timeout=60)

    def exported(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in self.env_file.read_text().splitlines() if line)

    def outputs(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in self.output_file.read_text().splitlines() if line)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def merged_pull_request(tmp_path: Path, change: Any) -> Path:
    """A repository whose HEAD is the merge of a pull request into main, main
    holding a state; ``change(repo)`` is the pull request's edit."""
    repo = tmp_path / "checkout"
    (repo / "manifests").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "manifests" / "access.yaml").write_text("version: 1\n")
    (repo / STATE).write_text('{"lineage": "main", "serial": 3}\n')
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "main")
    _git(repo, "checkout", "-qb", "pull-request")
    change(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "the pull request")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge", "pull-request")
    return repo


def _edit_manifest(repo: Path) -> None:
    (repo / "manifests" / "access.yaml").write_text("version: 1\n# a change\n")


TRUSTED = "Trust only the base branch's state"


def test_a_pull_request_that_changes_the_state_fails_the_check(tmp_path: Path, run: Run) -> None:
    repo = merged_pull_request(tmp_path, lambda r: (r / STATE).write_text('{"lineage": "main", "serial": 4}\n'))

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE="")

    assert done.returncode == 1
    assert (f"::error::This pull request changes {STATE}. Only the apply and directory jobs write the state; a "
            "pull request cannot change it (the plan would trust what it says). Revert the change to "
            f"{STATE}.") in done.stdout
    assert "RECONCILER_STATE" not in run.exported()


def test_a_pull_request_that_deletes_the_state_fails_the_check(tmp_path: Path, run: Run) -> None:
    repo = merged_pull_request(tmp_path, lambda r: (r / STATE).unlink())

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE="")

    assert done.returncode == 1
    assert f"This pull request changes {STATE}." in done.stdout


def test_a_pull_request_that_changes_the_directory_beside_the_state_fails_the_check(tmp_path: Path,
                                                                                   run: Run) -> None:
    """The directory the directory job pulls is state: a user a pull request adds to it, and the identity
    provider does not list, would be a leaver at the next pull, revoked everywhere without a review."""
    def add_a_user(repo: Path) -> None:
        (repo / f"{STATE}.directory.json").write_text('{"users": [{"userName": "raj@customer.com"}]}\n')

    repo = merged_pull_request(tmp_path, add_a_user)

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE="")

    assert done.returncode == 1
    assert f"::error::This pull request changes {STATE}.directory.json. Only the apply and directory jobs" in done.stdout
    assert "RECONCILER_STATE" not in run.exported()


def test_the_plan_reads_the_base_branchs_state_outside_the_checkout(tmp_path: Path, run: Run) -> None:
    repo = merged_pull_request(tmp_path, _edit_manifest)

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE="")

    assert done.returncode == 0, done.stdout + done.stderr
    copy = run.temp / "reconciler" / "base.state.json"
    assert run.exported() == {"RECONCILER_STATE": str(copy), "RECONCILER_REQUIRE_STATE": "1"}
    assert copy.read_text() == _git(repo, "show", f"HEAD^1:{STATE}") + "\n"


def test_with_postgresql_the_plan_reads_that_state(tmp_path: Path, run: Run) -> None:
    repo = merged_pull_request(tmp_path, _edit_manifest)
    url = "postgresql://reconciler_ro@db.example/access"

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE=url)

    assert done.returncode == 0, done.stderr
    assert run.exported() == {"RECONCILER_STATE": url}


def test_a_state_that_is_a_link_in_the_checkout_fails_the_check(tmp_path: Path, run: Run) -> None:
    def link(repo: Path) -> None:
        (repo / STATE).unlink()
        (repo / STATE).symlink_to("/dev/null")

    repo = merged_pull_request(tmp_path, link)

    done = run(_step("plan", name=TRUSTED)["run"], repo, POSTGRES_STATE="")

    assert done.returncode == 1
    assert f"::error::{STATE} is a symbolic link in the checkout; nothing was planned." in done.stdout


def test_a_plan_md_committed_as_a_link_cannot_empty_the_comment(tmp_path: Path, run: Run) -> None:
    """The issue's attack: plan.md a link to /dev/null made the comment empty while the plan held an owner grant."""
    repo = merged_pull_request(tmp_path, lambda r: (r / "plan.md").symlink_to("/dev/null"))
    (repo / "comment.md").symlink_to("/dev/null")
    out = run.temp / "reconciler"
    out.mkdir()
    (out / "plan.md").write_text("### reconciler plan\n+ user attacker@evil.example owner\n")

    done = run(_step("plan", name="Write the comment")["run"], repo, TRUSTED="success", VALID="success",
               PLAN_EXIT="0", DIGEST=DIGEST, HEAD_SHA=HEAD, RUN_URL="https://example.invalid/run",
               GITHUB_RUN_ID="1")

    assert done.returncode == 0, done.stderr
    comment = (out / "comment.md").read_text().splitlines()
    assert comment[:2] == [MARKER, f"<!-- reconciler-plan-digest: {DIGEST} head: {HEAD} -->"]
    assert "+ user attacker@evil.example owner" in comment


def test_the_comment_of_a_pull_request_that_changes_the_state_says_why_and_carries_no_digest(
        tmp_path: Path, run: Run) -> None:
    repo = merged_pull_request(tmp_path, _edit_manifest)
    out = run.temp / "reconciler"
    out.mkdir()
    (out / "trusted.txt").write_text(f"::error::This pull request changes {STATE}.\n")

    done = run(_step("plan", name="Write the comment")["run"], repo, TRUSTED="failure", VALID="", PLAN_EXIT="",
               DIGEST="", HEAD_SHA=HEAD, RUN_URL="https://example.invalid/run", GITHUB_RUN_ID="1")

    assert done.returncode == 0, done.stderr
    comment = (out / "comment.md").read_text()
    assert comment.splitlines()[1] == f"<!-- reconciler-plan-digest: none head: {HEAD} -->"
    assert f"**Nothing was planned:**\n\n```text\n::error::This pull request changes {STATE}.\n```" in comment


def test_the_plan_step_writes_every_output_under_runner_temp() -> None:
    script = _step("plan", step_id="plan")["run"]
    assert 'reconciler plan manifests --format markdown --out "$RUNNER_TEMP/reconciler/plan.json" > ' \
           '"$out/plan.md" 2> "$out/plan.err"' in script
    assert 'out="$RUNNER_TEMP/reconciler"' in script


# --- the apply job ----------------------------------------------------------------------------

FAKE_GH = r"""#!/bin/bash
# A stand-in for gh: each call answers what GitHub's API gives through the step's --jq.
case "$*" in
  *"/commits/"*"/pulls"*) echo 7 ;;
  *"/pulls/7 "*) echo "$MERGED_HEAD" ;;
  *"/actions/workflows/"*) printf '{"workflow_runs": [{"id": 99, "run_number": 5, "head_repository": {"full_name": "acme/access"}, "path": ".github/workflows/access.yml", "head_sha": "%s", "event": "pull_request"}]}' "$MERGED_HEAD" ;;
  "run download"*) dir="${@: -1}"; mkdir -p "$dir"; echo '{}' > "$dir/plan.json" ;;
  *"/issues/7/comments"*) cat "$COMMENTS" ;;
  *) echo "unexpected gh $*" >&2; exit 2 ;;
esac
"""


def _apply_pr_step(tmp_path: Path, run: Run, comment_lines: list[str]) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    comments = tmp_path / "comments"
    comments.write_text("".join(line + "\n" for line in comment_lines))
    return run(_step("apply", step_id="pr")["run"], tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               GITHUB_REPOSITORY="acme/access", GITHUB_SHA="f" * 40, MERGED_HEAD=HEAD, COMMENTS=str(comments),
               GITHUB_WORKFLOW_REF="acme/access/.github/workflows/access.yml@refs/heads/main", GH_TOKEN="x")


def test_the_apply_job_takes_the_digest_of_the_last_plan_comment_for_the_merged_head(tmp_path: Path,
                                                                                      run: Run) -> None:
    older = f"<!-- reconciler-plan-digest: {'cd' * 32} head: {'0' * 40} -->"
    done = _apply_pr_step(tmp_path, run, [older, f"<!-- reconciler-plan-digest: {DIGEST} head: {HEAD} -->"])

    assert done.returncode == 0, done.stdout + done.stderr
    assert run.outputs() == {"number": "7", "digest": DIGEST}


def test_the_apply_job_refuses_when_the_last_plan_comment_is_of_another_head(tmp_path: Path, run: Run) -> None:
    """A push after the approval: the comment shows the plan of the commit before it."""
    done = _apply_pr_step(tmp_path, run, [f"<!-- reconciler-plan-digest: {DIGEST} head: {'0' * 40} -->"])

    assert done.returncode == 1
    assert (f"::error::The last plan comment of pull request #7 shows no plan of its merged head {HEAD}; nothing "
            "was applied.") in done.stdout
    assert "digest" not in run.outputs()


def test_the_apply_job_refuses_when_the_last_plan_was_refused(tmp_path: Path, run: Run) -> None:
    done = _apply_pr_step(tmp_path, run, [f"<!-- reconciler-plan-digest: none head: {HEAD} -->"])

    assert done.returncode == 1
    assert "digest" not in run.outputs()


def test_the_apply_job_refuses_a_merge_that_changed_the_directory_beside_the_state(tmp_path: Path,
                                                                                   run: Run) -> None:
    repo = merged_pull_request(tmp_path, lambda r: (r / f"{STATE}.directory.json").write_text("{}\n"))

    done = run(_step("apply", name="Require the state once an apply has committed one")["run"], repo,
               GITHUB_SHA=_git(repo, "rev-parse", "HEAD"), POSTGRES_STATE="")

    assert done.returncode == 1
    assert f"changes {STATE}.directory.json; only the apply and directory jobs write the state." in done.stdout


def test_the_apply_job_refuses_a_merge_that_changed_the_state(tmp_path: Path, run: Run) -> None:
    """A pull request merged over its failed check: the apply job refuses it too."""
    repo = merged_pull_request(tmp_path, lambda r: (r / STATE).write_text('{"lineage": "main", "serial": 9}\n'))

    done = run(_step("apply", name="Require the state once an apply has committed one")["run"], repo,
               GITHUB_SHA=_git(repo, "rev-parse", "HEAD"), POSTGRES_STATE="")

    assert done.returncode == 1
    assert f"changes {STATE}; only the apply and directory jobs write the state. Nothing was applied." in done.stdout
