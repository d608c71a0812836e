"""``reconciler demo examples/review`` end to end on the emulator: it ends with No changes, and the
evidence page's figures are the ones the demo printed."""

from __future__ import annotations

import datetime
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from reconciler.commands.demo import example_names
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
    kept = re.search(r"^The review demo's files are kept in (\S+) ", out, re.MULTILINE)
    if kept:
        shutil.rmtree(kept.group(1), ignore_errors=True)
    assert code == 0, err
    assert "$ reconciler review start q4 " in out
    assert out.split("\n$ ")[-1].split("\n")[1].startswith("No changes.")


def test_the_review_demo_keeps_the_page_and_the_evidence_it_tells_the_user_to_open(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 2: the demo wrote review.html and evidence.html in a temporary directory and removed it."""
    code, out, err = run_cli(["demo", str(EXAMPLE)], capsys)
    assert code == 0, err
    kept = re.search(r"^The review demo's files are kept in (\S+) \(delete it when done\):$", out, re.MULTILINE)
    assert kept, out[-2000:]
    workdir = Path(kept.group(1))
    try:
        told = re.findall(r"^  open (\S+) ", out, re.MULTILINE)
        assert told == [str(workdir / "page" / "review.html"), str(workdir / "evidence" / "evidence.html")]
        for path in told:
            assert Path(path).read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html>")
        assert (workdir / "evidence" / "evidence.csv").is_file()
        assert (workdir / "company" / "reviews" / "q4" / "campaign.yaml").is_file()
        # Every directory a step wrote to is the kept one.
        for written in re.findall(r"^Wrote .* to (\S+?):", out, re.MULTILINE):
            assert Path(written).is_dir() and Path(written).parent == workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_demo_help_lists_every_shipped_example_by_name_the_review_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["demo", "--help"], capsys)
    assert code == 0, err
    names = example_names()
    assert "review" in names
    listed = re.search(r"NAME is one of the examples shipped with reconciler \(([^)]*)\)", " ".join(out.split()))
    assert listed and listed.group(1).split(", ") == names, out
    code, out, err = run_cli(["--help"], capsys)
    assert code == 0 and "'demo review' runs an access review" in " ".join(out.split()), out


def test_the_other_demos_still_leave_no_directory_behind(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    code, _, err = run_cli(["demo", "quickstart"], capsys)
    assert code == 0, err
    assert list(tmp_path.iterdir()) == []
