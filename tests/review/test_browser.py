"""The reviewer's page and the evidence page in a real headless Chromium.

A missing /usr/bin/chromium fails these tests, never skips them: run ``.ci/ensure-chromium``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.chromium import CHROMIUM, open_page
from tests.review.conftest import Company
from tests.review.devtools import DevTools, wait_for_file


@pytest.fixture(autouse=True)
def chromium_installed() -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run .ci/ensure-chromium (or make test, which runs it).")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    tools = DevTools(downloads)
    try:
        yield tools
    finally:
        tools.close()


# What a reviewer clicks: their name, then per item (by its row) a decision and a reason, typed.
MARK = """
(() => {
  const select = document.getElementById("reviewer");
  select.value = [...select.options].find((o) => o.textContent === "jane@acme.com").value;
  select.dispatchEvent(new Event("change"));
  const row = (i) => document.querySelector(`tr[data-item="${i}"]`);
  row(1).querySelector('button[data-decision="keep"]').click();
  row(0).querySelector('button[data-decision="revoke"]').click();
  const reason = row(0).querySelector("input.reason");
  reason.value = 'contractor left: "done" #1';
  reason.dispatchEvent(new Event("input"));
  row(2).querySelector('button[data-decision="revoke"]').click();
  return document.getElementById("progress").textContent;
})()
"""


def test_a_reviewer_marks_three_items_and_downloads_exactly_the_expected_file(
        started: Company, browser: DevTools, tmp_path: Path) -> None:
    code, _, err = started.run("review", "page", "q4", str(started.root), "--out", str(tmp_path / "page"),
                               service=False)
    assert code == 0, err
    browser.open(tmp_path / "page" / "review.html")
    assert browser.evaluate(MARK) == "3 of 4 decided"
    browser.evaluate('document.getElementById("download").click()')
    downloaded = wait_for_file(tmp_path / "downloads" / "jane@acme.com.yaml")

    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", '"contractor left: \\"done\\" #1"'), ("ws_a", "ext.com"): ("keep", None),
                                        ("ws_c", "dee@acme.com"): ("revoke", None)})
    expected = started.file("jane@acme.com.yaml").read_bytes()
    assert downloaded == expected
    # And it is a file the manifests take: committed in place, it validates.
    started.file("jane@acme.com.yaml").write_bytes(downloaded)
    code, _, err = started.run("validate", str(started.root), service=False)
    assert code == 0, err


def test_the_evidence_page_shows_its_figures_in_chromium(started: Company, tmp_path: Path) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None), ("ws_a", "ext.com"): ("keep", None),
                                        ("ws_c", "dee@acme.com"): ("revoke", None)})
    code, _, err = started.run("apply", str(started.root), "--auto-approve")
    assert code == 0, err
    code, _, err = started.run("review", "report", "q4", str(started.root), "--out", str(tmp_path / "evidence"),
                               service=False)
    assert code == 0, err
    dom = open_page(tmp_path / "evidence" / "evidence.html")
    assert dict(re.findall(r'data-figure="([a-z-]+)"><span class="value">([^<]*)<', dom)) == {
        "items": "8", "decided": "3", "kept": "1", "revoked": "2", "revoked-applied": "2", "overdue": "0"}
