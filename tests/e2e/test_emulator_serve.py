"""`reconciler emulator serve` options: faults from the command line, a faster clock."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from reconciler.clock import ScaledClock
from reconciler.commands.emulator import make_served_emulator
from reconciler.emulator.faults import parse_fault_spec
from reconciler.emulator.server import start_background_server
from reconciler.errors import ConfigError
from tests.e2e.conftest import QUICKSTART, TOKEN
from tests.waiting import read_line


def test_fault_spec_reads_every_key() -> None:
    assert parse_fault_spec("method=POST, path=/access$, kind=after_commit, times=always, rate=0.5") == {
        "method": "POST", "path_regex": "/access$", "kind": "after_commit", "status": 500,
        "times": None, "rate": 0.5, "seconds": 0.0,
    }


@pytest.mark.parametrize(
    ("spec", "complaint"),
    [
        ("kind=explode", "kind must be one of"),
        ("status=five", "bad value"),
        ("path=([", "bad value"),
        ("colour=red", "is not one of"),
        ("rate=0", "rate must be above 0"),
    ],
)
def test_bad_fault_spec_is_refused_with_a_reason(spec: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint):
        make_served_emulator(seed=QUICKSTART / "seed.yaml", data=None, faults=(spec,))


def test_served_fault_answers_over_http_then_stops_firing() -> None:
    emulator = make_served_emulator(seed=QUICKSTART / "seed.yaml", data=None,
                                    faults=("method=GET,path=^/v1/workspaces$,status=503,times=1",))
    base_url, stop = start_background_server(emulator)
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        first = httpx.get(f"{base_url}/v1/workspaces", headers=headers)
        second = httpx.get(f"{base_url}/v1/workspaces", headers=headers)
    finally:
        stop()
    assert [first.status_code, second.status_code] == [503, 200]


def test_time_scale_gives_the_served_emulator_a_faster_clock() -> None:
    emulator = make_served_emulator(seed=None, data=None, time_scale=6000.0)
    assert isinstance(emulator.clock, ScaledClock) and emulator.clock.scale == 6000.0


def test_scaled_clock_passes_a_minute_in_a_hundredth_of_a_wall_second() -> None:
    clock = ScaledClock(6000.0)
    before_virtual, before_wall = clock.now(), time.monotonic()
    clock.sleep(60.0)
    assert clock.now() - before_virtual >= 60.0
    # The real wait is 60/6000 s: only its lower bound is asserted, never an upper one.
    assert time.monotonic() - before_wall >= 0.01


def test_cli_refuses_a_bad_fault_before_listening(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.e2e.conftest import run_cli

    code, out, err = run_cli(["emulator", "serve", "--port", "0", "--fault", "kind=explode"], capsys)
    assert code == 1
    assert "--fault 'kind=explode': kind must be one of" in err
    assert "Emulator listening" not in out and "Traceback" not in err


# --- issue 10: clear errors instead of internal ones, a warning when exposed ---

BAD_SEED = "companies:\n  acme: {tokn: dev-token-acme}\n"


def test_serve_on_a_taken_port_is_exit_1_naming_the_address_and_port(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.e2e.conftest import run_cli

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = run_cli(["emulator", "serve", "--host", "127.0.0.1", "--port", str(port)], capsys)
    assert code == 1, err
    assert f"127.0.0.1 port {port}" in err and "already in use" in err
    assert "Internal error" not in err and "Traceback" not in err
    assert "Emulator listening" not in out


def test_serve_with_a_seed_with_an_unknown_key_is_exit_1_with_the_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.e2e.conftest import run_cli

    seed = tmp_path / "seed.yaml"
    seed.write_text(BAD_SEED, encoding="utf-8")
    code, out, err = run_cli(["emulator", "serve", "--port", "0", "--seed", str(seed)], capsys)
    assert code == 1, err
    assert f"{seed}: companies.acme: unknown key tokn" in err
    assert "Internal error" not in err and "Emulator listening" not in out


def test_plan_with_an_emulator_seed_with_an_unknown_key_is_exit_1_with_the_place(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.e2e.conftest import run_cli

    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    monkeypatch.delenv("RECONCILER_BASE_URL", raising=False)
    seed = tmp_path / "bad-seed.yaml"
    seed.write_text(BAD_SEED, encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), "--emulator", str(tmp_path / "emulator.yaml"),
                            "--seed", str(seed)], capsys)
    assert code == 1, err
    assert f"{seed}: companies.acme: unknown key tokn" in err
    assert "Internal error" not in err


def test_serve_with_a_data_file_that_cannot_be_written_is_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.e2e.conftest import run_cli

    not_a_dir = tmp_path / "plain-file"
    not_a_dir.write_text("", encoding="utf-8")
    data = not_a_dir / "emulator.yaml"
    code, out, err = run_cli(["emulator", "serve", "--port", "0", "--data", str(data)], capsys)
    assert code == 1, err
    assert f"Cannot write the emulator data file {data}" in err
    assert "Internal error" not in err and "Emulator listening" not in out


def _serve_briefly(*args: str) -> tuple[str, str]:
    """Run `reconciler emulator serve ARGS` until it announces its address (a
    line read within a deadline), then stop it; returns (stdout, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "reconciler", "emulator", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = read_line(proc)
    finally:
        proc.terminate()
        rest, err = proc.communicate(timeout=20)
    return first + rest, err


def test_serve_on_all_interfaces_with_the_demo_token_warns_on_stderr() -> None:
    out, err = _serve_briefly("--host", "0.0.0.0")
    assert "http://0.0.0.0:" in out.splitlines()[0]
    assert "Warning:" in err and "reachable from the network" in err and "publicly known" in err
    assert "dev-token-acme" not in err  # the warning names the problem, it does not repeat the token


def test_serve_on_loopback_with_the_demo_token_does_not_warn() -> None:
    out, err = _serve_briefly("--host", "127.0.0.1")
    assert "http://127.0.0.1:" in out.splitlines()[0]
    assert "Warning" not in err
