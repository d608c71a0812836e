"""A --state (or RECONCILER_STATE) that names PostgreSQL is never taken as a
file path: a key=value connection string, or a URL in any letter case. The
password in one never reaches any output, and no file named after it is
written. Through the real entry point, on the quickstart emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import emu_args, run_cli

pytestmark = pytest.mark.usefixtures("no_ambient_connection")

SECRET = "hunter2"


def _files(*roots: Path) -> set[Path]:
    return {p for root in roots for p in root.rglob("*")}


@pytest.mark.parametrize("conninfo", [f"host=db.example user=ci password={SECRET} dbname=acme",
                                      f"  DBNAME=acme PASSWORD={SECRET}"])
def test_a_conninfo_string_is_refused_and_never_echoed(project: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, conninfo: str) -> None:
    monkeypatch.chdir(project)
    before = _files(project)

    code, out, err = run_cli(["plan", str(project), *emu_args(project), "--state", conninfo], capsys)

    assert code == 1
    assert ("--state (or RECONCILER_STATE) is a PostgreSQL key=value connection string; give the state's address "
            "as a URL instead") in err
    assert SECRET not in out + err
    assert _files(project) - before <= {project / "emulator.yaml"}  # no file named after the conninfo


def test_a_conninfo_in_the_environment_is_refused_too(project: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_STATE", f"host=db.example password={SECRET}")

    code, out, err = run_cli(["apply", str(project), *emu_args(project), "--auto-approve"], capsys)

    assert code == 1
    assert "is a PostgreSQL key=value connection string" in err and SECRET not in out + err


def test_an_upper_case_url_with_a_password_is_refused_without_the_password(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(project), *emu_args(project), "--state",
                              f"POSTGRESQL://ci:{SECRET}@db.example/acme"], capsys)

    assert code == 1
    assert "The state address postgresql://ci:***@db.example/acme holds a password" in err
    assert SECRET not in out + err


def test_a_mixed_case_url_is_used_as_postgresql(project: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    before = _files(project)

    code, _, err = run_cli(["plan", str(project), *emu_args(project), "--state", "Postgres://ci@127.0.0.1:1/acme"],
                           capsys)

    assert code == 1
    assert "Cannot connect to the PostgreSQL state postgres://ci@127.0.0.1:1/acme" in err
    assert _files(project) - before <= {project / "emulator.yaml"}
