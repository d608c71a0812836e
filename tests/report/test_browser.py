"""index.html in a real headless Chromium: the figures, a person's rows, a screenshot, and a
10,000-workspace company whose first rows are on screen within 2 s.

Three Chromium launches in all (the onboarding page twice, then the big one).  A
missing /usr/bin/chromium fails these tests, never skips them: run
``.ci/ensure-chromium`` (``make test`` runs it first).
"""

from __future__ import annotations

import datetime
import re
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from bench.chromium import CHROMIUM, open_page
from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, Why
from reconciler.report.files import write_report
from reconciler.report.model import make_report
from tests.e2e.conftest import ROOT, run_cli
from tests.report.test_command import Served, served  # noqa: F401  # the fixture

SCREENSHOT_COPY = ROOT / "build" / "report-screenshot.png"
HOSTILE = '<img id="pwned" src=x onerror="document.title=1"></script><script>document.title=2</script>'


@pytest.fixture(autouse=True)
def chromium_installed() -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run .ci/ensure-chromium (or make test, which runs it).")


def png_colours(data: bytes, *, limit: int = 2) -> int:
    """How many distinct pixel values an 8-bit, non-interlaced PNG holds (counting stops at ``limit``)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        header, idat = (body, idat) if kind == b"IHDR" else (header, idat + body if kind == b"IDAT" else idat)
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0
    bpp = {2: 3, 6: 4, 0: 1, 4: 2}[colour_type]
    raw, stride, seen = zlib.decompress(idat), width * bpp, set()
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        seen.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp * 7))
        if len(seen) >= limit:
            return len(seen)
        previous = line
    return len(seen)


def test_the_onboarding_page_shows_its_figures_and_the_external_peoples_rows_in_chromium(
        served: Served, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # noqa: F811
    code, _, err = run_cli(["report", "onboarding", "--base-url", served.url, "--out", "out",
                            "--internal-domain", "acme.com"], capsys)
    assert code == 0, err
    shot = tmp_path / "report.png"
    # Opened with the "external only" filter in the address, as a reviewer's link would.
    dom = open_page(served.root / "out" / "index.html", fragment="external=1", screenshot=shot)

    figures = dict(re.findall(r'data-figure="([a-z-]+)"><span class="value">([^<]*)<', dom))
    assert figures == {"workspaces": "4", "people": "5", "external-people": "2", "domain-grants": "2",
                       "owners": "1 / 1 / 1", "no-owner": "0", "one-owner": "4", "expiring": "0", "unmanaged": "0",
                       "leavers": "0"}
    # The script ran: raj's group, drawn from the data block, with both workspaces and why.
    person = re.search(r'<tbody class="group" data-person="raj@customer.com">(.*?)</tbody>', dom, re.S)
    assert person is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", person.group(1))
    assert cells == [
        'Customer Inc – Home <span class="id">ws_home</span>', "Customer Inc", "viewer",
        "group.customer-inc at onboarding/groups.yaml:13", "",
        'Customer Inc – Welcome <span class="id">ws_welcome</span>', "Customer Inc", "viewer",
        "group.customer-inc at onboarding/groups.yaml:13", ""]
    # The filter applied: the external people and domains only, people first.
    assert re.findall(r'<tbody class="group" data-person="([^"]+)">', dom) == [
        "old.contractor@agency.io", "raj@customer.com", "domain customer.com"]
    assert "people and domains 1–3 of 3" in dom

    data = shot.read_bytes()
    assert png_colours(data) > 1, "the screenshot is one colour: nothing was drawn"
    SCREENSHOT_COPY.parent.mkdir(exist_ok=True)
    shutil.copyfile(shot, SCREENSHOT_COPY)


def test_the_workspace_view_filtered_to_owners_and_searched_shows_the_matching_rows_in_chromium(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    code, _, err = run_cli(["report", "onboarding", "--base-url", served.url, "--out", "out",
                            "--internal-domain", "acme.com"], capsys)
    assert code == 0, err
    dom = open_page(served.root / "out" / "index.html", fragment="view=workspaces&owners=1&q=partner")

    # Only the partner portal's name holds "partner", and of its two rows only ops is an owner
    # (temp@acme.com, an editor nobody wrote down, is filtered out).
    assert re.findall(r'<tbody class="group" data-workspace="([^"]+)">', dom) == ["ws_partner"]
    group = re.search(r'<tbody class="group" data-workspace="ws_partner">(.*?)</tbody>', dom, re.S)
    assert group is not None
    assert re.findall(r"<td[^>]*>(.*?)</td>", group.group(1)) == [
        'ops@acme.com<span class="badge internal">internal</span>', "owner",
        "workspace.partner-portal at onboarding/workspaces.yaml:9", "", ""]
    assert "Partner Portal" in group.group(1) and "1 owner" in group.group(1)


def big_company(n: int) -> CompanyAccess:
    """``n`` workspaces shaped like the benchmark's (bench/scenario.py): an internal owner, 19 customers
    and 5 domains each; the first workspace has a hostile name."""
    entry = Why(source="entry", location="manifests/clients.yaml:3", address="workspace.c", role="viewer")
    workspaces, rows = [], []
    for i in range(n):
        wid, name = f"ws_{i:06d}", HOSTILE if i == 0 else f"Client {i}"
        workspaces.append(CompanyWorkspace(id=wid, name=name, address=f"workspace.c-{i}"))
        rows.append(AccessRow(workspace_id=wid, workspace_name=name, kind="user", key="aaa.owner@acme.com",
                              role="owner", why=entry))
        rows += [AccessRow(workspace_id=wid, workspace_name=name, kind="user", key=f"p{j}.c{i}@customer{i}.com",
                           role="viewer", why=entry) for j in range(1, 20)]
        rows += [AccessRow(workspace_id=wid, workspace_name=name, kind="domain", key=f"d{k}.customer{i}.com",
                           role="viewer", why=Why(source="unmanaged")) for k in range(5)]
    return CompanyAccess(workspaces=tuple(workspaces), rows=tuple(rows), calls=n // 100)


def test_a_10000_workspace_page_draws_only_its_first_page_of_rows(tmp_path: Path) -> None:
    """What keeps a big page quick, asserted as counts: the script draws the visible 25 groups
    and no more.  How quick is the benchmark's to measure (``bench/report_scale.py``: first rows
    in Chromium), not a test's."""
    moment = datetime.datetime(2027, 1, 15, tzinfo=datetime.UTC)
    made = make_report(big_company(10_000), generated_at=moment, internal_domains=("acme.com",))
    write_report(tmp_path, made, changes=None, today=moment.date())
    dom = open_page(tmp_path / "index.html")

    assert re.search(r'<html lang="en" data-first-rows-ms="(\d+)"', dom), "the script did not draw its first rows"
    # Only the visible page of 25 groups is in the DOM, the owner of all 10,000 first.
    assert dom.count('<tbody class="group"') == 25
    assert "people and domains 1–25 of 240,001".replace(",", "") in dom.replace(",", "")
    # The hostile name is text in the DOM, never an element or a script that ran.
    assert "<img" not in dom and "<title>Access review" in dom  # no element made, no handler ran
    assert "&lt;img id=\"pwned\" src=x onerror=\"document.title=1\"&gt;&lt;/script&gt;" in dom
