"""The same slice over real HTTP: the emulator served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from reconciler import commands
from reconciler.emulator import Emulator
from reconciler.target import Target
from tests.e2e.conftest import QUICKSTART, TOKEN


def test_plan_and_apply_over_loopback_http(served: tuple[str, Emulator], tmp_path: Path) -> None:
    base_url, emulator = served
    assert base_url.startswith("http://127.0.0.1:")
    target = Target(base_url=base_url, env={"RECONCILER_TOKEN": TOKEN})
    state = tmp_path / "state.json"
    first = commands.plan(QUICKSTART, target=target, state_path=state)
    assert first.summary.delete == 1
    commands.apply(QUICKSTART, target=target, state_path=state, targets=(), max_removals=None, plan_file=None,
                   confirm=lambda _text: True, color=False, progress=lambda _m: None)
    assert not commands.plan(QUICKSTART, target=target, state_path=state).has_changes
    assert emulator.request_count(method="POST") == 2


def test_base_url_with_v1_segment_works_too(served: tuple[str, Emulator], tmp_path: Path) -> None:
    base_url, _ = served
    target = Target(base_url=base_url + "/v1/", env={"RECONCILER_TOKEN": TOKEN})
    assert commands.plan(QUICKSTART, target=target, state_path=tmp_path / "s.json").has_changes
