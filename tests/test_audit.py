"""The audit log's pieces on their own: the CI context, the privilege
classes, appending, and a log that cannot be written."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from reconciler.apply.audit import AuditLog, AuditLogError, ci_context, privilege_classes
from reconciler.errors import ConfigError


def test_a_github_pull_request_run_gives_commit_head_branch_and_number() -> None:
    env = {"GITHUB_SHA": "abc123", "GITHUB_REF": "refs/pull/7/merge", "GITHUB_REF_NAME": "7/merge",
           "GITHUB_HEAD_REF": "feature/access", "GITHUB_TOKEN": "ghs_secret"}
    assert ci_context(env) == {"commit": "abc123", "branch": "feature/access", "pull_request": 7}


def test_a_github_push_gives_the_branch_and_no_pull_request() -> None:
    env = {"GITHUB_SHA": "abc123", "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main", "GITHUB_HEAD_REF": ""}
    assert ci_context(env) == {"commit": "abc123", "branch": "main", "pull_request": None}


def test_the_pull_request_number_is_read_from_the_event_file(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 314, "title": "x"}}), encoding="utf-8")
    env = {"GITHUB_REF": "refs/heads/main", "GITHUB_EVENT_PATH": str(event)}
    assert ci_context(env)["pull_request"] == 314


def test_an_unreadable_event_file_gives_no_pull_request(tmp_path: Path) -> None:
    env = {"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")}
    assert ci_context(env)["pull_request"] is None


def test_gitlab_merge_request_pipelines_are_read_too() -> None:
    env = {"CI_COMMIT_SHA": "def456", "CI_COMMIT_REF_NAME": "mr-branch", "CI_MERGE_REQUEST_IID": "12",
           "CI_JOB_TOKEN": "glcbt-secret"}
    assert ci_context(env) == {"commit": "def456", "branch": "mr-branch", "pull_request": 12}


def test_no_ci_environment_gives_nulls() -> None:
    assert ci_context({}) == {"commit": None, "branch": None, "pull_request": None}


def test_privilege_falls_back_to_the_change_kind() -> None:
    without_classes = SimpleNamespace(kind="access", entries=(SimpleNamespace(key="a@b.c"),))
    with_classes = SimpleNamespace(kind="access", entries=(SimpleNamespace(privilege="grant"),
                                                           SimpleNamespace(privilege="revocation")))
    assert privilege_classes(without_classes) == ["access"]  # type: ignore[arg-type]
    assert privilege_classes(with_classes) == ["revocation", "grant"]  # type: ignore[arg-type]
    assert privilege_classes(SimpleNamespace(kind="section")) == ["section"]  # type: ignore[arg-type]


def _send(log: AuditLog, url: str, status: int) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status)

    with httpx.Client(transport=httpx.MockTransport(answer)) as http:
        log.install(http)
        http.put(url)


def test_lines_are_appended_to_an_existing_log(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"earlier": true}\n', encoding="utf-8")
    with AuditLog(path, env={}) as log:
        _send(log, "https://storage.example/uploads/f_1?X-Signature=s3cr3t", 200)
    first, second = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(first) == {"earlier": True}
    line = json.loads(second)
    assert (line["method"], line["path"], line["status"], line["address"]) == ("PUT", "/uploads/f_1", 200, None)
    assert line["time"].endswith("Z") and "s3cr3t" not in second


def test_a_log_that_cannot_be_opened_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot open the audit log"):
        AuditLog(tmp_path / "no" / "such" / "dir.jsonl").open()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_after_a_failed_write_the_next_call_is_not_sent() -> None:
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return httpx.Response(200)

    log = AuditLog(Path("/dev/full"), env={}).open()
    with httpx.Client(transport=httpx.MockTransport(answer)) as http:
        log.install(http)
        http.get("https://api.example/v1/a")  # made: its answer is not lost, its line could not be written
        with pytest.raises(AuditLogError, match="No space left on device.*GET /v1/b was not sent"):
            http.get("https://api.example/v1/b")
    assert sent == ["/v1/a"]
    with pytest.raises(AuditLogError, match="could not be written .*it misses calls"):
        log.close()
