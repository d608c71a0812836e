"""``reconciler demo examples/review`` end to end on the emulator: it ends with No changes, and the
evidence page's figures are the ones the demo printed."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from reconciler.commands.review_demo import review_demo_steps
from reconciler.service import Service
from tests.e2e.conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "review"


def test_the_review_demo_ends_with_no_changes_and_evidence_whose_figures_match(tmp_path: Path) -> None:
    service = Service(emulator_file=tmp_path / "emulator.yaml",
                      emulator_seed=ROOT / "examples" / "company" / "seed.yaml", env={})
    outputs = [(title, step()) for title, step in review_demo_steps(
        EXAMPLE, tmp_path, service=service, color=False, today=datetime.date(2027, 1, 15))]
    report = next(out for title, out in outputs if title.startswith("reconciler review report"))
    assert report.startswith(f"Wrote evidence.csv, evidence.html to {tmp_path}/evidence: 38 items, 38 decided "
                             "(36 kept, 2 revoked, 2 revoked and applied), 0 overdue.\n")
    page = (tmp_path / "evidence" / "evidence.html").read_text()
    assert dict(re.findall(r'data-figure="([a-z-]+)"><span class="value">([^<]*)<', page)) == {
        "items": "38", "decided": "38", "kept": "36", "revoked": "2", "revoked-applied": "2", "overdue": "0"}
    plan_with_review = next(out for title, out in outputs if "revoked in review" in out)
    assert "(revoked in review q4 by bo@acme.com)" in plan_with_review
    assert "(revoked in review q4 by cy@acme.com)" in plan_with_review
    assert outputs[-1][1].startswith("No changes. The service matches the manifests")


def test_reconciler_demo_examples_review_runs_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["demo", str(EXAMPLE)], capsys)
    assert code == 0, err
    assert "$ reconciler review start q4 " in out
    assert out.split("\n$ ")[-1].split("\n")[1].startswith("No changes.")
