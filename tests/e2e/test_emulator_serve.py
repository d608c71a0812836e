"""`reconciler emulator serve` options: faults from the command line, a faster clock."""

from __future__ import annotations

import time

import httpx
import pytest

from reconciler.clock import ScaledClock
from reconciler.commands import make_served_emulator
from reconciler.emulator.faults import parse_fault_spec
from reconciler.emulator.server import start_background_server
from reconciler.errors import ConfigError
from tests.e2e.conftest import QUICKSTART, TOKEN


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
