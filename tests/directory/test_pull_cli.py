"""reconciler directory pull, then directory sync, through the real entry point against directory serve's
application over HTTP (or HTTPS, its certificate signed by a private authority) on 127.0.0.1: exit codes,
what is printed, what is written, what the service is asked."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from reconciler.directory.server import DirectoryApplication
from reconciler.directory.store import open_directory_store
from reconciler.serving import background_server
from tests.directory.conftest import TOKEN, FixedClock, scim_group, scim_user
from tests.e2e.conftest import run_cli
from tests.private_ca import PrivateCa, private_ca, served_over_https


@pytest.fixture
def idp(tmp_path: Path) -> Iterator[DirectoryApplication]:
    """directory serve's application over a state file holding three people (one a leaver) and two groups."""
    from reconciler.directory.server import directory_app

    store = open_directory_store(str(tmp_path / "idp.state.json"), now=FixedClock())
    store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com", active=False, manager="u3"),
                  scim_user("u3", "jane@acme.com")],
                 [scim_group("g1", "Engineering", "u1", "u2"), scim_group("g2", "Sales Team")], today=store.today())
    try:
        yield directory_app(store, TOKEN)
    finally:
        store.close()


@pytest.fixture
def source(idp: DirectoryApplication) -> Iterator[str]:
    """``idp`` over HTTP on 127.0.0.1: its SCIM base URL."""
    from reconciler.directory.server import background_server as serve_directory

    url, stop = serve_directory(idp)
    try:
        yield f"{url}/scim/v2"
    finally:
        stop()


class Recorder:
    """An ASGI application passed through, each request it received noted as ``GET /path?query``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.requests.append(f"{scope['method']} {scope['path']}?{scope['query_string'].decode()}")
        await self.app(scope, receive, send)


@pytest.fixture
def recorded_source(idp: DirectoryApplication) -> Iterator[tuple[str, Recorder]]:
    """``idp`` over HTTP on 127.0.0.1, the requests it receives recorded: (SCIM base URL, recorder)."""
    recorder = Recorder(idp)
    url, stop = background_server(recorder, what="directory server")
    try:
        yield f"{url}/scim/v2", recorder
    finally:
        stop()


@pytest.fixture
def slow_source(idp: DirectoryApplication) -> Iterator[str]:
    """``idp`` over HTTP on 127.0.0.1, each answer begun half a second late: its SCIM base URL."""

    async def late(scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.sleep(0.5)
        await idp(scope, receive, send)

    url, stop = background_server(late, what="directory server")
    try:
        yield f"{url}/scim/v2"
    finally:
        stop()


@pytest.fixture
def https_source(idp: DirectoryApplication, tmp_path: Path) -> Iterator[tuple[str, PrivateCa]]:
    """``idp`` over HTTPS on 127.0.0.1, its certificate signed by a private authority: (SCIM base URL, the
    authority's files)."""
    ca = private_ca(tmp_path)
    with served_over_https(idp, ca, what="directory server") as url:
        yield f"{url}/scim/v2", ca


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "scim-token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture(autouse=True)
def no_ambient_state(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RECONCILER_STATE", "RECONCILER_DIRECTORY_PULL_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def test_pull_then_sync_writes_the_served_directory_into_the_manifests(
        source: str, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state, manifests = tmp_path / "reconciler.state.json", tmp_path / "manifests"
    manifests.mkdir()
    pulled = run_cli(["directory", "pull", source, "--state", str(state), "--token-file", str(token_file)], capsys)
    synced = run_cli(["directory", "sync", str(manifests), "--state", str(state)], capsys)
    assert (pulled[0], synced[0]) == (0, 0), (pulled, synced)
    text = (manifests / "directory.yaml").read_text()
    with open_directory_store(str(state)) as store:  # the day of the pull, by the real clock
        (leaver,) = store.snapshot().leavers()
    assert leaver.since is not None
    assert text.split("\n", 2)[2] == ("directory:\n"
                                      "  groups:\n"
                                      "    Engineering:\n"
                                      "      - ana@acme.com\n"
                                      "    Sales Team: []\n"
                                      "  deactivated:\n"
                                      f"    bo@acme.com: {{since: {leaver.since.isoformat()}, "
                                      "successor: jane@acme.com}\n")


def test_pull_prints_one_line_of_what_it_read(source: str, token_file: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "reconciler.state.json"
    code, out, err = run_cli(["directory", "pull", source, "--state", str(state), "--token-file", str(token_file)],
                             capsys)
    assert (code, err) == (0, "")
    assert out == (f"Pulled 3 users and 2 groups from the SCIM service at {source} into the directory of the state "
                   f"{state} (1 newly deactivated).\n")


def test_sync_prints_what_changed_then_no_changes(source: str, token_file: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    state, manifests = tmp_path / "reconciler.state.json", tmp_path / "manifests"
    manifests.mkdir()
    run_cli(["directory", "pull", source, "--state", str(state), "--token-file", str(token_file)], capsys)
    first = run_cli(["directory", "sync", str(manifests), "--state", str(state)], capsys)
    second = run_cli(["directory", "sync", str(manifests), "--state", str(state)], capsys)
    assert first[1] == (f"Wrote {manifests / 'directory.yaml'} from the directory of the state {state}:\n"
                        "  a new file: 2 groups, 1 leaver\n")
    assert second[1] == (f"{manifests / 'directory.yaml'} already holds the directory of the state {state}: "
                         "no changes.\n")


def test_the_token_is_never_printed_by_a_pull_that_succeeds_or_fails(
        source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_DIRECTORY_PULL_TOKEN", TOKEN)
    state = tmp_path / "reconciler.state.json"
    good = run_cli(["directory", "pull", source, "--state", str(state)], capsys)
    bad = run_cli(["directory", "pull", source.removesuffix("/scim/v2"), "--state", str(state)], capsys)
    assert (good[0], bad[0]) == (0, 1)
    assert TOKEN not in "".join(good[1:] + bad[1:])


def test_an_unreachable_service_is_one_paragraph_exit_1_and_nothing_written(
        token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/scim/v2"
    state = tmp_path / "reconciler.state.json"
    code, out, err = run_cli(["directory", "pull", url, "--state", str(state), "--token-file", str(token_file)],
                             capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: No answer from the SCIM service at {url} to GET /Users?startIndex=1&count=100 ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.rstrip().endswith(f"Nothing was written to the directory of the state {state}.")
    assert list(tmp_path.glob("reconciler.state.json*")) == []


def test_pull_without_a_state_is_refused_before_anything_is_sent(token_file: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["directory", "pull", "https://idp.example.com/scim/v2", "--token-file", str(token_file)],
                           capsys)
    assert code == 1
    assert "Missing option '--state'" in err


def _pull(url: str, state: Path, token_file: Path, capsys: pytest.CaptureFixture[str],
          *flags: str) -> tuple[int, str, str]:
    return run_cli(["directory", "pull", url, "--state", str(state), "--token-file", str(token_file), *flags], capsys)


def test_page_size_is_the_count_asked_for_each_page_and_every_page_is_still_read(
        recorded_source: tuple[str, Recorder], token_file: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, recorder = recorded_source
    state = tmp_path / "reconciler.state.json"
    code, out, err = _pull(url, state, token_file, capsys, "--page-size", "2")
    assert (code, err) == (0, "")
    assert out.startswith("Pulled 3 users and 2 groups ")
    assert recorder.requests == ["GET /scim/v2/Users?startIndex=1&count=2", "GET /scim/v2/Users?startIndex=3&count=2",
                                 "GET /scim/v2/Groups?startIndex=1&count=2"]


def test_timeout_bounds_each_answer_of_the_scim_service(slow_source: str, token_file: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "reconciler.state.json"
    code, out, err = _pull(slow_source, state, token_file, capsys, "--timeout", "0.1")
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: No answer from the SCIM service at {slow_source} to "
                          "GET /Users?startIndex=1&count=100 (4 attempts): ReadTimeout")


def test_a_service_a_private_authority_signed_is_pulled_with_that_authoritys_ca_bundle(
        https_source: tuple[str, PrivateCa], token_file: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, ca = https_source
    state = tmp_path / "reconciler.state.json"
    code, out, err = _pull(url, state, token_file, capsys, "--ca-bundle", str(ca.ca_bundle))
    assert url.startswith("https://127.0.0.1:")
    assert (code, err) == (0, "")
    assert out.startswith(f"Pulled 3 users and 2 groups from the SCIM service at {url} ")


def test_without_the_ca_bundle_a_private_authoritys_certificate_is_one_paragraph_exit_1_and_nothing_written(
        https_source: tuple[str, PrivateCa], token_file: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = https_source
    state = tmp_path / "reconciler.state.json"
    code, out, err = _pull(url, state, token_file, capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: No secure connection to the SCIM service at {url} for "
                          "GET /Users?startIndex=1&count=100: its TLS certificate could not be verified (")
    assert "--ca-bundle FILE" in err and "attempts" not in err  # not tried again: it would be refused again
    assert err.count("\n") == 1 and "Traceback" not in err and TOKEN not in err
    assert err.rstrip().endswith(f"Nothing was written to the directory of the state {state}.")
    assert list(tmp_path.glob("reconciler.state.json*")) == []
