"""reconciler directory pull, then directory sync, through the real entry point against directory serve's
application over HTTP on 127.0.0.1: exit codes, what is printed, what is written."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.directory.store import open_directory_store
from tests.directory.conftest import TOKEN, FixedClock, scim_group, scim_user
from tests.e2e.conftest import run_cli


@pytest.fixture
def source(tmp_path: Path) -> Iterator[str]:
    """directory serve's application over a state file holding three people (one a leaver) and two groups:
    its SCIM base URL."""
    from reconciler.directory.server import directory_app
    from reconciler.directory.server import background_server

    store = open_directory_store(str(tmp_path / "idp.state.json"), now=FixedClock())
    store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com", active=False, manager="u3"),
                  scim_user("u3", "jane@acme.com")],
                 [scim_group("g1", "Engineering", "u1", "u2"), scim_group("g2", "Sales Team")], today=store.today())
    url, stop = background_server(directory_app(store, TOKEN))
    try:
        yield f"{url}/scim/v2"
    finally:
        stop()
        store.close()


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
