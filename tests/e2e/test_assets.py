"""Assets planned and applied against the emulator (in-process, virtual clock).

Each test writes a small manifest of assets and files beside it, against a
seed with two tags; the state file lives in the same temp dir.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, ManifestError
from reconciler.manifest import load_desired
from reconciler.plan.model import AssetChange
from reconciler.plan.render_text import render_text
from reconciler.state import load_state
from tests.e2e.conftest import EmulatorRig, seed_company

SEED = {**seed_company([{"id": "ws_1", "name": "Home", "published": True,
                         "users": [{"email": "jane@acme.com", "role": "owner"}]}])}
SEED["companies"]["acme"]["tags"] = [{"id": "tag_a", "title": "a"}, {"id": "tag_b", "title": "b"}]

FILES = {
    "deck.pdf": b"%PDF-1.4 pricing",
    "logo.png": b"\x89PNG\r\n\x1a\n logo",
    "tour.mp4": b"\x00\x00\x00\x18ftypmp42 tour",
    "pod.mp3": b"ID3 podcast",
    "plan.docx": b"PK\x03\x04 docx",
    "deck.pptx": b"PK\x03\x04 pptx",
    "sheet.xlsx": b"PK\x03\x04 xlsx",
    "page.html": b"<html><body>hi</body></html>",
}

ALL_TYPES = """
version: 1
assets:
  deck: {type: pdf, file: files/deck.pdf, name: Deck}
  logo: {type: image, file: files/logo.png}
  tour: {type: video, file: files/tour.mp4, metadata: {width: 1920, height: 1080, duration: 93}}
  pod: {type: audio, file: files/pod.mp3, metadata: {duration: 60}}
  plan: {type: docx, file: files/plan.docx}
  slides: {type: ppt, file: files/deck.pptx}
  sheet: {type: xlsx, file: files/sheet.xlsx}
  page: {type: htmlPage, file: files/page.html}
  site: {type: link, url: "https://acme.com", name: Acme}
  booking: {type: embed, customCode: "<iframe src='https://cal.example/acme'></iframe>", name: Book}
"""


class Rig(EmulatorRig):
    def write(self, manifest: str) -> None:
        (self.root / "manifest.yaml").write_text(textwrap.dedent(manifest).lstrip(), encoding="utf-8")

    def asset(self, address: str) -> Any:
        asset_id = load_state(self.state_path).resources[address].id
        return next(a for a in self.company.assets if a.id == asset_id)

    def count(self, method: str, prefix: str) -> int:
        return self.emulator.request_count(method=method, path_prefix=prefix)


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    (tmp_path / "files").mkdir()
    for name, data in FILES.items():
        (tmp_path / "files" / name).write_bytes(data)
    return Rig(Emulator.from_seed(SEED, clock=clock), clock, tmp_path)


def test_every_asset_type_is_created_once_and_then_plans_no_changes(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    plan = rig.apply()
    assert [c.action for c in plan.changes] == ["create"] * 10
    assert len(rig.company.assets) == 10
    types = {a: rig.asset(f"asset.{a}").type for a in ("deck", "plan", "slides", "sheet", "site", "booking")}
    assert types == {"deck": "pdf", "plan": "docx", "slides": "ppt", "sheet": "xlsx", "site": "link",
                     "booking": "embed"}
    assert rig.count("POST", "/v1/files") == 8 and rig.count("PUT", "/uploads/") == 8
    assert not rig.plan().has_changes


def test_media_metadata_is_sent_at_creation(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    assert rig.asset("asset.tour").metadata == {"width": 1920, "height": 1080, "duration": 93}
    assert rig.asset("asset.pod").metadata == {"duration": 60}


def test_uploaded_bytes_are_the_files_bytes(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    deck = rig.asset("asset.deck")
    file = next(f for f in rig.company.files if f.id == deck.file_id)
    assert file.sha256 == hashlib.sha256(FILES["deck.pdf"]).hexdigest()
    assert load_state(rig.state_path).resources["asset.deck"].asset.digest == file.sha256


def test_description_and_internal_are_patched_after_creation(rig: Rig) -> None:
    rig.write("""
        version: 1
        assets:
          deck: {type: pdf, file: files/deck.pdf, description: Price book, internal: true, tags: [tag_a]}
    """)
    (change,) = rig.plan().changes
    assert [f"{c.method} {c.path}" for c in change.calls] == [
        "POST /files", "PUT (presigned upload address)", "POST /assets", "PATCH /assets/(new)"]
    rig.apply()
    deck = rig.asset("asset.deck")
    assert (deck.description, deck.is_internal, deck.tag_ids) == ("Price book", True, ["tag_a"])
    assert rig.count("PATCH", "/v1/assets/") == 1
    assert not rig.plan().has_changes


def test_tags_are_replaced_as_a_whole_list(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  site: {type: link, url: 'https://acme.com', name: Acme, tags: [tag_a]}\n")
    rig.apply()
    rig.write("version: 1\nassets:\n  site: {type: link, url: 'https://acme.com', name: Acme, tags: [tag_b]}\n")
    (change,) = rig.plan().changes
    assert isinstance(change, AssetChange)
    assert (change.action, change.patch, change.before) == ("update", ("tags",), {"tags": ["tag_a"]})
    rig.apply()
    assert rig.asset("asset.site").tag_ids == ["tag_b"]


def test_a_renamed_asset_is_patched_not_recreated(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    rig.write(ALL_TYPES.replace("name: Deck", "name: Deck 2027"))
    (change,) = rig.plan().changes
    assert (change.action, change.patch) == ("update", ("name",))
    rig.apply()
    assert rig.asset("asset.deck").name == "Deck 2027" and len(rig.company.assets) == 10


def test_a_changed_file_makes_a_new_asset_and_says_the_old_one_stays(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    old = rig.asset("asset.deck").id
    (rig.root / "files" / "deck.pdf").write_bytes(b"%PDF-1.4 pricing, revised")
    (change,) = rig.plan().changes
    assert (change.action, change.asset_id) == ("replace", old)
    text = render_text(rig.plan())
    assert "-/+ asset pdf \"Deck\" from files/deck.pdf" in text
    assert f"asset {old} stays in the service" in text and "remove it in the web app" in text
    progress: list[str] = []
    rig.apply(progress=progress)
    assert rig.asset("asset.deck").id != old and len(rig.company.assets) == 11
    assert any(f"the old asset {old} stays in the service" in line for line in progress)


def test_a_changed_url_makes_a_new_asset(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    rig.write(ALL_TYPES.replace("https://acme.com", "https://acme.example"))
    (change,) = rig.plan().changes
    assert change.action == "replace" and "url changed" in change.reason


def test_the_create_call_is_retried_while_the_bytes_are_not_visible(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    rig.emulator.faults.inject("POST", "^/v1/assets$", kind="status", status=400, times=2)
    rig.apply()
    assert [r.status for r in rig.emulator.requests if r.path == "/v1/assets"] == [400, 400, 201]
    assert len(rig.company.assets) == 1


def test_an_apply_interrupted_after_the_upload_resumes_without_uploading_again(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    rig.emulator.faults.inject("POST", "^/v1/assets$", kind="status", status=500, times=None)
    with pytest.raises(ApplyError, match=r"Apply stopped at asset.deck .*manifest.yaml:3"):
        rig.apply()
    pending = load_state(rig.state_path).resources["asset.deck"]
    assert pending.id == "" and pending.asset.uploaded is True
    rig.emulator.faults.clear()
    (change,) = rig.plan().changes
    assert change.file_id == pending.asset.file_id
    assert [c.path for c in change.calls] == ["/assets"]
    rig.apply()
    assert rig.count("POST", "/v1/files") == 1 and rig.count("PUT", "/uploads/") == 1
    assert rig.asset("asset.deck").file_id == pending.asset.file_id
    assert not rig.plan().has_changes


def test_a_lost_create_answer_is_not_answered_by_a_second_asset(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    rig.emulator.faults.inject("POST", "^/v1/assets$", kind="after_commit", times=1)
    with pytest.raises(ApplyError, match="already backs an asset: .* lists it as needing a person"):
        rig.apply()
    assert len(rig.company.assets) == 1  # the retry was refused: one file backs one asset
    again = rig.plan()
    assert again.changes == ()
    (doubt,) = again.needs_person
    file_id = rig.company.assets[0].file_id
    assert (doubt.address, doubt.cause, doubt.file_id) == ("asset.deck", "file-backs-asset", file_id)


def test_a_lost_link_creation_is_never_sent_again_on_its_own(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  site: {type: link, url: 'https://acme.com', name: Acme}\n")
    rig.emulator.faults.inject("POST", "^/v1/assets$", kind="after_commit", times=1)
    with pytest.raises(ApplyError, match="may or may not have been created"):
        rig.apply()
    with pytest.raises(ApplyError, match="1 resource needs a person"):
        rig.apply()  # nothing planned for it: it may exist
    assert len(rig.company.assets) == 1
    (created,) = rig.company.assets
    # Found in the web app and adopted (an asset import makes no service call).
    from reconciler.commands.import_ import import_workspace
    from reconciler.service import Service

    import_workspace(rig.root, "asset.site", created.id, service=Service(), state_path=rig.state_path)
    (change,) = rig.plan().changes
    assert (change.action, change.asset_id) == ("update", created.id)
    rig.apply()
    assert len(rig.company.assets) == 1 and not rig.plan().has_changes


def test_wait_follows_a_conversion_to_the_end(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  plan: {type: docx, file: files/plan.docx}\n")
    progress: list[str] = []
    rig.apply(wait=True, progress=progress)
    file_id = rig.asset("asset.plan").file_id
    assert next(f for f in rig.company.files if f.id == file_id).upload_status == "ready"
    assert rig.count("GET", f"/v1/files/{file_id}") >= 2
    assert f"asset.plan: file {file_id} converted" in progress


def test_without_wait_apply_says_the_conversion_is_running(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  plan: {type: docx, file: files/plan.docx}\n")
    progress: list[str] = []
    rig.apply(progress=progress)
    assert any("is being converted to PDF in the background" in line for line in progress)
    assert rig.count("GET", "/v1/files/") == 0


def test_a_conversion_that_never_ends_is_reported(rig: Rig) -> None:
    rig.emulator.conversion_seconds = 10_000
    rig.write("version: 1\nassets:\n  plan: {type: docx, file: files/plan.docx}\n")
    with pytest.raises(ApplyError, match=r"asset.plan .*still in_progress after 900 seconds"):
        rig.apply(wait=True)


def test_the_plan_counts_conversion_polls_and_uploads_apart(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    cost = rig.plan().cost
    assert cost.calls_by_class == {"default": 18, "storage": 8}
    assert cost.conversion_polls == 3
    assert cost.min_seconds == 0  # uploads do not count against the service's limits


def test_an_unknown_tag_is_a_clear_error_naming_the_asset(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  site: {type: link, url: 'https://acme.com', name: Acme, tags: [tag_nope]}\n")
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert "Apply stopped at asset.site" in message and "manifest.yaml:3" in message
    assert "tag_nope" in message and "400" in message


def test_a_file_changed_between_plan_and_apply_is_not_uploaded(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    plan = rig.plan()
    (rig.root / "files" / "deck.pdf").write_bytes(b"something else")
    with pytest.raises(ApplyError, match="changed since the plan was made"):
        rig.apply(plan)
    assert rig.count("POST", "/v1/files") == 0


def test_an_asset_removed_from_the_manifest_is_forgotten_and_stays(rig: Rig) -> None:
    rig.write(ALL_TYPES)
    rig.apply()
    rig.write(ALL_TYPES.replace("  site: {type: link, url: \"https://acme.com\", name: Acme}\n", ""))
    plan = rig.plan()
    assert plan.forgotten == ("asset.site",)
    assert any("the API cannot delete assets" in w for w in plan.warnings)


@pytest.mark.parametrize(("entry", "message"), [
    ("{type: pdf, file: files/missing.pdf}", "'files/missing.pdf' does not exist"),
    ("{type: pdf, file: ../outside.pdf}", "outside the manifest root"),
    ("{type: pdf, file: /etc/hostname}", "must be a path relative to the manifest file"),
    ("{type: pdf, file: files/link.pdf}", "outside the manifest root"),
    ("{type: pdf, file: files/plan.docx}", "type pdf does not take application/vnd.openxmlformats"),
    ("{type: video, file: files/tour.mp4}", "a video needs metadata"),
    ("{type: embed, url: 'https://a.example', customCode: '<b>x</b>', name: X}", "has both url and customCode"),
    ("{type: pdf, file: \"files/a\\0b.pdf\"}", "NUL character"),
])
def test_bad_asset_input_is_refused_with_its_line_before_any_call(rig: Rig, entry: str, message: str) -> None:
    (rig.root.parent / "outside.pdf").write_bytes(b"%PDF")
    os.symlink(rig.root.parent / "outside.pdf", rig.root / "files" / "link.pdf")
    rig.write(f"version: 1\nassets:\n  bad: {entry}\n")
    with pytest.raises(ManifestError) as refused:
        load_desired(rig.root)
    (problem,) = refused.value.problems
    assert problem.startswith(f"{rig.root / 'manifest.yaml'}:3: assets.bad") and message in problem
    assert rig.emulator.requests == []


def test_a_file_over_the_size_cap_is_refused_naming_the_option(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    with pytest.raises(ManifestError, match=r"manifest.yaml:3: assets.deck.file: 'files/deck.pdf' is 16 bytes, "
                                            r"over the limit of 10 .*--max-file-size"):
        load_desired(rig.root, max_file_bytes=10)


def test_a_refused_upload_gets_a_fresh_file_not_a_retry_into_the_void(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    rig.emulator.faults.inject("PUT", "^/uploads/", kind="status", status=403, times=1)
    rig.apply()
    assert rig.count("POST", "/v1/files") == 2 and rig.count("PUT", "/uploads/") == 2
    assert len(rig.company.assets) == 1


def test_a_file_asset_whose_creation_was_cut_off_is_simply_tried_again(rig: Rig) -> None:
    # The apply died with POST /assets in flight (the pending doubt is in the state, the service made
    # nothing): the next plan resumes with the same file; one file backs one asset, so this is safe.
    rig.write("version: 1\nassets:\n  deck: {type: pdf, file: files/deck.pdf}\n")
    rig.emulator.faults.inject("POST", "^/v1/assets$", kind="drop", times=2)
    with pytest.raises(ApplyError):
        rig.apply()
    pending = load_state(rig.state_path).resources["asset.deck"].asset
    assert pending.uncertain and pending.uploaded
    (change,) = rig.plan().changes
    assert change.file_id == pending.file_id
    rig.apply()
    assert len(rig.company.assets) == 1 and rig.count("PUT", "/uploads/") == 1
    assert not rig.plan().has_changes


def test_a_patch_lost_after_a_successful_creation_is_a_pending_step_the_next_apply_sends(rig: Rig) -> None:
    rig.write("version: 1\nassets:\n  site: {type: link, url: 'https://acme.com', name: Acme, description: Ours, "
              "internal: true}\n")
    rig.emulator.faults.inject("PATCH", "^/v1/assets/", kind="drop", times=None)  # every attempt: retries too
    with pytest.raises(ApplyError, match=r"was created and recorded in the state \(its PATCH of description, "
                                         r"internal is left for the next apply"):
        rig.apply()
    (made,) = rig.company.assets
    recorded = load_state(rig.state_path).resources["asset.site"]
    assert recorded.id == made.id and not recorded.asset.uncertain
    assert recorded.asset.pending_patch == ["description", "internal"]
    rig.emulator.faults.clear()
    again = rig.plan()
    assert again.needs_person == ()
    (change,) = again.changes
    assert (change.action, change.asset_id, change.patch) == ("update", made.id, ("description", "internal"))
    assert "PATCH after the creation got no answer" in change.reason
    rig.apply(again)
    assert (made.description, made.is_internal) == ("Ours", True) and len(rig.company.assets) == 1
    assert load_state(rig.state_path).resources["asset.site"].asset.pending_patch is None
    assert rig.plan().settled
    assert render_text(rig.plan()).startswith("No changes.")
