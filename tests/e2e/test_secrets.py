"""The token, and the signatures of presigned upload addresses, appear in no
output, trace, plan file or state file: a whole plan/apply of the onboarding
example over real HTTP, with --debug traces and failing calls."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from tests.e2e.conftest import ROOT, run_cli

TOKEN = "dev-token-acme"


@pytest.fixture
def onboarding_served(tmp_path: Path) -> Iterator[tuple[str, Emulator, Path]]:
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    emulator = Emulator.from_seed_file(root / "seed.yaml")
    base_url, stop = start_background_server(emulator)
    try:
        yield base_url, emulator, root
    finally:
        stop()


def test_no_secret_in_any_output_trace_plan_or_state(onboarding_served, tmp_path: Path, capsys,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    base_url, emulator, root = onboarding_served
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # any crash log lands where this test can read it
    connection = ["--base-url", base_url, "--debug", "--retries", "1"]
    plan_file = tmp_path / "plan.json"
    outputs: list[str] = []

    def run(argv: list[str]) -> int:
        code, out, err = run_cli(argv, capsys)
        outputs.extend([out, err])
        return code

    assert run(["plan", str(root), *connection, "--out", str(plan_file)]) == 0
    emulator.faults.inject("PATCH", "/workspace-sections/", status=500, times=None)
    assert run(["apply", str(root), *connection, "--auto-approve"]) == 1  # fails part-way
    emulator.faults.clear()
    emulator.faults.inject("POST", "^/v1/assets$", status=401, times=1)
    assert run(["apply", str(root), *connection, "--auto-approve"]) == 1  # an error answer
    emulator.faults.clear()
    assert run(["apply", str(root), *connection, "--auto-approve"]) == 0
    assert run(["plan", str(root), *connection, "--format", "json"]) == 0

    upload_tokens = [f.upload_token for f in emulator.store.companies["acme"].files]
    assert len(upload_tokens) == 2
    traces = "\n".join(outputs)
    assert "debug: > PUT " in traces and "?[redacted]" in traces  # the uploads were traced
    files = [plan_file, root / "reconciler.state.json", *tmp_path.glob("reconciler-crash*")]
    written = traces + "".join(path.read_text(encoding="utf-8") for path in files)
    assert TOKEN not in written
    for secret in upload_tokens:
        assert secret not in written
