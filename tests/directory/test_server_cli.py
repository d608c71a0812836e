"""``reconciler directory serve`` as a child process: the base URL first, the token from a file or the
environment (never argv), refused without one, loopback by default, and the token in no output or log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.directory.conftest import TOKEN
from tests.waiting import read_line, said, wait_for_exit

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RECONCILER_DIRECTORY_TOKEN", "RECONCILER_STATE")}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def _start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reconciler", "directory", "serve", "--state", str(tmp_path / "s.json"),
         "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env or _env(), cwd=tmp_path)


def _stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    process.send_signal(signal.SIGINT)
    wait_for_exit(process)
    out, err = process.communicate()
    return out, err


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "scim-token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def serving(tmp_path: Path, token_file: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = _start(tmp_path, "--token-file", str(token_file))
    try:
        yield process, read_line(process).strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_first_line_is_the_scim_base_url_on_loopback(serving: tuple[subprocess.Popen[str], str]) -> None:
    process, url = serving
    assert url.startswith("http://127.0.0.1:") and url.endswith("/scim/v2"), said(process, seen=url)


def test_the_served_directory_is_kept_beside_the_state_file(serving: tuple[subprocess.Popen[str], str],
                                                            tmp_path: Path) -> None:
    _, url = serving
    answer = httpx.post(f"{url}/Users", json={"schemas": [USER_SCHEMA], "userName": "ana@acme.com"},
                        headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 201
    assert "ana@acme.com" in (tmp_path / "s.json.directory.json").read_text()


def test_the_token_is_in_no_output_or_log(serving: tuple[subprocess.Popen[str], str], tmp_path: Path) -> None:
    process, url = serving
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.post(f"{url}/Users", json={"schemas": [USER_SCHEMA], "userName": "ana@acme.com"},
                      headers=headers).status_code == 201
    assert httpx.get(f"{url}/Users", params={"filter": 'userName eq "nobody"'}, headers=headers).status_code == 200
    assert httpx.get(f"{url}/Users", headers={"Authorization": f"Bearer {TOKEN}-wrong"}).status_code == 401
    assert httpx.get(f"{url}/Nowhere", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
    out, err = _stop(process)
    assert '"POST /scim/v2/Users HTTP/1.1" 201' in out  # the logs were captured: uvicorn's access log
    assert TOKEN not in out + err
    assert all(TOKEN not in p.read_text(errors="replace") for p in tmp_path.iterdir() if p.is_file()
               and p.name != "scim-token")


def test_the_token_may_come_from_the_environment(tmp_path: Path) -> None:
    process = _start(tmp_path, env=_env(RECONCILER_DIRECTORY_TOKEN=TOKEN))
    try:
        url = read_line(process).strip()
        assert httpx.get(f"{url}/Users", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    finally:
        _stop(process)


def test_serve_without_a_token_is_refused_with_exit_1(tmp_path: Path) -> None:
    process = _start(tmp_path)
    code = wait_for_exit(process)
    out, err = process.communicate()
    assert (code, out) == (1, "")
    assert "No token for the SCIM endpoint: put one in a file and pass --token-file FILE, or set " \
           "RECONCILER_DIRECTORY_TOKEN." in err
    assert "Traceback" not in err


def test_serve_with_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("\n")
    process = _start(tmp_path, "--token-file", str(tmp_path / "empty"))
    assert wait_for_exit(process) == 1
    assert f"The token file {tmp_path / 'empty'} is empty." in process.communicate()[1]


def test_there_is_no_token_option() -> None:
    help_text = subprocess.run([sys.executable, "-m", "reconciler", "directory", "serve", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "--token " not in help_text and "--token-file FILE" in help_text
