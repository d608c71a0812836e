"""The reviewer's page and the evidence page in a real headless Chromium.

A missing /usr/bin/chromium fails these tests, never skips them: run ``.ci/ensure-chromium``.
"""

from __future__ import annotations

import json

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.chromium import CHROMIUM, open_page
from tests.review.conftest import MANIFEST, Company, start_q4
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
    code, _, err = started.run("review", "page", "q4", str(started.root), "--out", str(tmp_path / "page"))
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


# ws_a and ws_d are connected (one list); rule baseline ensures dee@acme.com on every workspace.
SHARED_AND_RULED = MANIFEST + """rules:
  baseline:
    match: {all: true}
    ensure:
      users: [{email: dee@acme.com, role: editor}]
"""


def _shared_and_ruled() -> list[dict[str, object]]:
    listed = {"users": [{"email": "jane@acme.com", "role": "owner"}, {"email": "bob@ext.com", "role": "editor"}],
              "domains": [{"domain": "ext.com", "role": "viewer"}]}
    return [
        {"id": "ws_a", "name": "Alpha", "published": True, "group": "g1", **listed},
        {"id": "ws_c", "name": "Gamma", "published": True,
         "users": [{"email": "joe@acme.com", "role": "owner"}, {"email": "jane@acme.com", "role": "owner"},
                   {"email": "dee@acme.com", "role": "editor"}]},
        {"id": "ws_d", "name": "Delta", "published": True, "group": "g1", **listed},
    ]


@pytest.fixture
def consequential(make_company: Callable[..., Company]) -> Company:
    return start_q4(make_company(_shared_and_ruled(), manifest=SHARED_AND_RULED))


@pytest.fixture
def over_http(tmp_path: Path) -> Iterator[Callable[[Path], str]]:
    """The page at a URL of 127.0.0.1 rather than file://: what the browser keeps is then kept under one
    origin for sure. Under load, Chromium was seen to give a reloaded file:// page an empty localStorage
    (the one it had held before the reload, which its browser process had, was gone)."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def end_headers(self) -> None:
            # Nothing cached: a reload after the page was written again gets the new file, not a 304.
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield lambda page: f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(tmp_path).as_posix()}"
    finally:
        server.shutdown()
        server.server_close()


def _page(company: Company, out: Path) -> Path:
    code, _, err = company.run("review", "page", "q4", str(company.root), "--out", str(out))
    assert code == 0, err
    return out / "review.html"


# Per row of jane's items: its decision, its reason, and the texts of what it does.
ROWS = """
(() => {
  const select = document.getElementById("reviewer");
  const jane = [...select.options].find((o) => o.textContent === "jane@acme.com").value;
  if (select.value !== jane) {
    select.value = jane;
    select.dispatchEvent(new Event("change"));
  }
  const rows = {};
  for (const row of document.querySelectorAll("tr[data-entry]")) {
    const pressed = row.querySelector('button[aria-pressed="true"]');
    rows[row.dataset.entry] = {decision: pressed ? pressed.dataset.decision : null,
                               reason: row.querySelector("input.reason").value,
                               does: row.querySelector("td.effects").textContent,
                               decide: row.querySelector("td.decide").textContent};
  }
  return {rows, progress: document.getElementById("progress").textContent,
          kept: document.getElementById("kept").textContent};
})()
"""


def _reload(browser: DevTools) -> None:
    """The page loaded again, as a person's reload does (in the same renderer), and its new document ready."""
    from bench.chromium import TIMEOUT_SECONDS
    from tests.waiting import wait_until

    # What the page keeps is written by its renderer and reaches the browser process a moment later; a reload
    # before it arrives would read the store without it (seen on a loaded machine). Wait until the browser
    # process holds exactly what the page wrote, then reload.
    kept = browser.evaluate("JSON.stringify(Object.entries(window.localStorage).sort())")

    def arrived() -> bool:
        items = browser.call("DOMStorage.getDOMStorageItems", browser.session,
                             storageId={"securityOrigin": browser.evaluate("location.origin"),
                                        "isLocalStorage": True})["entries"]
        return json.dumps(sorted(items), separators=(",", ":"), ensure_ascii=False) == kept

    wait_until(arrived, deadline=TIMEOUT_SECONDS, every=0.05,
               what=lambda: "the browser process never held what the page kept")
    browser.evaluate("window.beforeReload = true; location.reload()")
    wait_until(lambda: browser.loaded("!window.beforeReload"), deadline=TIMEOUT_SECONDS, every=0.05,
               what=lambda: "the page did not load again")


def _click(browser: DevTools, entry: str, decision: str, reason: str | None = None) -> None:
    browser.evaluate(f"""
(() => {{
  const row = document.querySelector(`tr[data-entry="{entry}"]`);
  row.querySelector('button[data-decision="{decision}"]').click();
  const reason = {'null' if reason is None else repr(reason)};
  if (reason !== null) {{
    const input = row.querySelector("input.reason");
    input.value = reason;
    input.dispatchEvent(new Event("input"));
  }}
}})()""")


def test_decisions_made_on_the_page_are_there_after_a_reload_until_forgotten(
        consequential: Company, browser: DevTools, tmp_path: Path, over_http: Callable[[Path], str]) -> None:
    page = _page(consequential, tmp_path / "page")
    browser.open(over_http(page))
    before = browser.evaluate(ROWS)
    assert before["progress"] == "0 of 6 decided"
    _click(browser, "ws_a bob@ext.com", "revoke", "contractor left")
    _click(browser, "ws_c dee@acme.com", "keep")
    _reload(browser)
    after = browser.evaluate(ROWS)
    assert after["progress"] == "2 of 6 decided"
    assert after["kept"] == "Kept in this browser: 2 of your decisions."
    assert (after["rows"]["ws_a bob@ext.com"]["decision"], after["rows"]["ws_a bob@ext.com"]["reason"]) == (
        "revoke", "contractor left")
    assert after["rows"]["ws_c dee@acme.com"]["decision"] == "keep"
    # The file downloaded after the reload holds them, in the format review start wrote.
    browser.evaluate('document.getElementById("download").click()')
    downloaded = wait_for_file(tmp_path / "downloads" / "jane@acme.com.yaml")
    consequential.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", '"contractor left"'),
                                              ("ws_c", "dee@acme.com"): ("keep", None)})
    assert downloaded == consequential.file("jane@acme.com.yaml").read_bytes()

    browser.evaluate('document.getElementById("forget").click()')
    forgotten = browser.evaluate(ROWS)
    assert forgotten["kept"] == "Forgotten: the decisions are the file's again."
    assert forgotten["progress"] == "0 of 6 decided"  # the page was made from the undecided files
    _reload(browser)
    assert browser.evaluate(ROWS)["progress"] == "0 of 6 decided"


def test_a_campaign_started_again_never_picks_up_the_decisions_kept_for_the_one_before(
        consequential: Company, browser: DevTools, tmp_path: Path, over_http: Callable[[Path], str]) -> None:
    page = _page(consequential, tmp_path / "page")
    browser.open(over_http(page))
    _click(browser, "ws_a bob@ext.com", "revoke")
    _reload(browser)
    assert browser.evaluate(ROWS)["progress"] == "1 of 6 decided"
    shutil.rmtree(consequential.root / "reviews" / "q4")
    start_q4(consequential, "--on-due", "flag")  # the same name, started again (another due date below)
    campaign = consequential.file("campaign.yaml")
    campaign.write_text(campaign.read_text().replace("due: 2027-02-01", "due: 2027-02-02"))
    _page(consequential, tmp_path / "page")  # the same file, written again
    _reload(browser)
    assert browser.evaluate(ROWS)["progress"] == "0 of 6 decided"


def test_each_item_says_what_its_decision_does(consequential: Company, browser: DevTools, tmp_path: Path) -> None:
    browser.open(_page(consequential, tmp_path / "page"))
    rows = browser.evaluate(ROWS)["rows"]
    dee_line = SHARED_AND_RULED.split("\n").index("      users: [{email: dee@acme.com, role: editor}]") + 1
    ruled = f"rule baseline ({consequential.root / 'm.yaml'}:{dee_line})"
    # A rule ensures it: said next to the revoke button, and in what it does.
    assert rows["ws_c dee@acme.com"]["decide"] == (
        f"keep revokeA revoke will not hold: {ruled} ensures it here; change the rule.")
    assert rows["ws_c dee@acme.com"]["does"] == f"Ensured by {ruled}: the manifests put it back."
    # A shared list: the other workspace holding it is named.
    assert rows["ws_a bob@ext.com"]["does"] == (
        'Shared list: ws_a holds one list with ws_d "Delta"; a keep or revoke here is one for all of them.')
    assert rows["ws_d bob@ext.com"]["does"] == (
        'Shared list: ws_d holds one list with ws_a "Alpha"; a keep or revoke here is one for all of them.')
    # A domain: everyone at it, however many.
    assert rows["ws_a ext.com"]["does"].startswith("everyone at ext.comA domain entry lets in everyone with an "
                                                   "address at ext.com (how many people is not known).Shared list")
    # A keep and a revoke of one entry of one list: the conflict is named on both.
    _click(browser, "ws_a bob@ext.com", "keep")
    _click(browser, "ws_d bob@ext.com", "revoke")
    rows = browser.evaluate(ROWS)["rows"]
    assert rows["ws_a bob@ext.com"]["does"].endswith(
        "Conflict: revoked on ws_d by jane@acme.com: one list, one decision.")
    assert rows["ws_d bob@ext.com"]["does"].endswith(
        "Conflict: kept on ws_a by jane@acme.com: one list, one decision.")
    assert "Conflict" not in rows["ws_c dee@acme.com"]["does"]
