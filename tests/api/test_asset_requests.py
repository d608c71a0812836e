"""The exact requests a file asset's creation sends, seen by respx.

The planner makes the change from a real manifest; the applier sends it
through the real client; respx answers as the service description shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import respx

from reconciler.api.client import WorkspaceClient
from reconciler.apply.assets import apply_asset
from reconciler.clock import VirtualClock
from reconciler.manifest import load_desired
from reconciler.plan.assets import plan_asset
from reconciler.state import State
from tests.api.conftest import BASE, TOKEN, data
from tests.api.test_uploads import STORAGE_URL, _iso

PDF = b"%PDF-1.4 the price book"


def _change(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "deck.pdf").write_bytes(PDF)
    (tmp_path / "manifest.yaml").write_text(
        "version: 1\nassets:\n  deck: {type: pdf, file: deck.pdf, name: Deck, description: Price book,\n"
        "         tags: [tag_a], internal: true}\n", encoding="utf-8")
    (asset,) = load_desired(tmp_path).assets
    change = plan_asset(asset, State(), reassert=False)
    assert change is not None
    return change


def _service(router: respx.Router, clock: VirtualClock) -> None:
    router.post("/files").respond(201, json={"data": {
        "file": {"id": "f_1", "uploadStatus": "in_progress", "url": None},
        "upload": {"url": STORAGE_URL, "method": "PUT", "headers": {"Content-Type": "application/pdf"},
                   "expiresAt": _iso(clock.now() + 3600)}}})
    router.put(STORAGE_URL).respond(200)
    router.post("/assets").respond(201, json=data("asset", {"id": "as_1", "object": "asset"}))
    router.patch("/assets/as_1").respond(200, json=data("asset", {"id": "as_1", "object": "asset"}))


def test_a_file_asset_is_created_with_exactly_these_requests(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, tmp_path: Path
) -> None:
    _service(router, clock)
    state = apply_asset(client, _change(tmp_path), State(), save=lambda s: s, say=lambda _m: None, wait=False)
    sent = [call.request for call in router.calls]
    assert [(r.method, str(r.url)) for r in sent] == [
        ("POST", f"{BASE}/files"),
        ("PUT", STORAGE_URL),
        ("POST", f"{BASE}/assets"),
        ("PATCH", f"{BASE}/assets/as_1"),
    ]
    assert json.loads(sent[0].read()) == {"fileName": "deck.pdf", "mimeType": "application/pdf"}
    assert sent[1].read() == PDF
    assert sent[1].headers["Content-Type"] == "application/pdf"
    # Only the documented creation fields; description and internal follow in the PATCH.
    assert json.loads(sent[2].read()) == {"type": "pdf", "fileId": "f_1", "name": "Deck", "tagIds": ["tag_a"]}
    assert json.loads(sent[3].read()) == {"description": "Price book", "isInternal": True}
    assert state.resources["asset.deck"].id == "as_1"


def test_the_storage_put_carries_no_service_credentials(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, tmp_path: Path
) -> None:
    _service(router, clock)
    apply_asset(client, _change(tmp_path), State(), save=lambda s: s, say=lambda _m: None, wait=False)
    put = next(call.request for call in router.calls if call.request.method == "PUT")
    assert "Authorization" not in put.headers
    assert TOKEN not in str(put.url) and all(TOKEN not in v for v in put.headers.values())
    service = [call.request for call in router.calls if call.request.method != "PUT"]
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in service)


def test_every_step_is_saved_as_it_happens(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, tmp_path: Path
) -> None:
    _service(router, clock)
    saved: list[State] = []
    apply_asset(client, _change(tmp_path), State(), save=lambda s: saved.append(s) or s, say=lambda _m: None,
                wait=False)
    steps = [(s.resources["asset.deck"].id, s.resources["asset.deck"].asset.uploaded,
              s.resources["asset.deck"].asset.uncertain) for s in saved]
    # file created; bytes uploaded; creation about to be sent (a crash from here leaves the doubt); created
    assert steps == [("", False, None), ("", True, None), ("", True, True), ("as_1", True, None)]
