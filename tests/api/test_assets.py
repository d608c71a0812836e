from __future__ import annotations

import json

import pytest
import respx
from pydantic import ValidationError

from reconciler.api import errors
from reconciler.api.bodies import AssetMetadata, EmbedAssetInput, FileAssetInput, LinkAssetInput
from reconciler.api.client import WorkspaceClient
from reconciler.clock import VirtualClock
from tests.api.conftest import data, error

ASSET = data("asset", {"id": "a_1", "assetType": "pdf"})
NOT_UPLOADED = error("BAD_REQUEST", "The file has not been uploaded")


@pytest.mark.parametrize(
    ("asset", "body"),
    [
        (FileAssetInput(type="pdf", fileId="f_1", name="Contract", tagIds=("t_1",)),
         {"type": "pdf", "fileId": "f_1", "name": "Contract", "tagIds": ["t_1"]}),
        (FileAssetInput(type="video", fileId="f_2", metadata=AssetMetadata(width=1920, height=1080, duration=61.5)),
         {"type": "video", "fileId": "f_2", "metadata": {"width": 1920, "height": 1080, "duration": 61.5}}),
        (FileAssetInput(type="audio", fileId="f_3", metadata=AssetMetadata(duration=30)),
         {"type": "audio", "fileId": "f_3", "metadata": {"duration": 30}}),
        (LinkAssetInput(url="https://example.com", name="Site"),
         {"type": "link", "url": "https://example.com", "name": "Site"}),
        (EmbedAssetInput(customCode="<iframe></iframe>"), {"type": "embed", "customCode": "<iframe></iframe>"}),
        (EmbedAssetInput(url="https://cal.example/acme", name="Calendar"),
         {"type": "embed", "url": "https://cal.example/acme", "name": "Calendar"}),
        (FileAssetInput(type="image", fileId="f_4"), {"type": "image", "fileId": "f_4"}),
        (FileAssetInput(type="docx", fileId="f_5"), {"type": "docx", "fileId": "f_5"}),
        (FileAssetInput(type="ppt", fileId="f_6"), {"type": "ppt", "fileId": "f_6"}),
        (FileAssetInput(type="xlsx", fileId="f_7"), {"type": "xlsx", "fileId": "f_7"}),
        (FileAssetInput(type="htmlPage", fileId="f_8", name="Landing"),
         {"type": "htmlPage", "fileId": "f_8", "name": "Landing"}),
    ],
    ids=["pdf", "video", "audio", "link", "embed-customCode", "embed-url", "image", "docx", "ppt", "xlsx",
         "htmlPage"],
)
def test_asset_bodies_carry_only_their_fields(
    router: respx.Router, client: WorkspaceClient,
    asset: FileAssetInput | LinkAssetInput | EmbedAssetInput, body: dict[str, object],
) -> None:
    route = router.post("/assets").respond(201, json=ASSET)
    assert client.create_asset(asset).id == "a_1"
    assert json.loads(route.calls.last.request.content) == body


def test_embed_needs_exactly_one_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        EmbedAssetInput(url="https://x.example", customCode="<p/>")
    with pytest.raises(ValidationError, match="exactly one"):
        EmbedAssetInput()


@pytest.mark.parametrize(
    ("kind", "meta", "message"),
    [("video", AssetMetadata(duration=3), "metadata of a video needs width, height and duration"),
     ("audio", AssetMetadata(width=1, duration=3), "metadata of an audio has a duration only"),
     ("pdf", AssetMetadata(), "metadata is for video and audio assets, not pdf")],
)
def test_metadata_follows_the_media_type(kind: str, meta: AssetMetadata, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        FileAssetInput(type=kind, fileId="f_1", metadata=meta)


def test_asset_creation_is_not_retried_after_500(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/assets").respond(500, json=error("INTERNAL_SERVER_ERROR", "Boom"))
    with pytest.raises(errors.ServerError):
        client.create_asset(FileAssetInput(type="pdf", fileId="f_1"))
    assert route.call_count == 1


def test_asset_creation_waits_while_the_bytes_are_not_visible(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock
) -> None:
    route = router.post("/assets").mock(side_effect=[
        respx.MockResponse(400, json=NOT_UPLOADED), respx.MockResponse(400, json=NOT_UPLOADED),
        respx.MockResponse(201, json=ASSET),
    ])
    asset = client.create_asset_when_uploaded(FileAssetInput(type="pdf", fileId="f_1"), first_wait=2)
    assert asset.id == "a_1"
    assert route.call_count == 3
    assert clock.slept == 2 + 4


def test_asset_creation_gives_up_after_its_attempts(router: respx.Router, client: WorkspaceClient,
                                                    clock: VirtualClock) -> None:
    route = router.post("/assets").respond(400, json=NOT_UPLOADED)
    with pytest.raises(errors.NotReadyInTime, match="after 3 attempts over 6 seconds") as info:
        client.create_asset_when_uploaded(FileAssetInput(type="pdf", fileId="f_1"), attempts=3, first_wait=2)
    assert route.call_count == 3
    assert isinstance(info.value.__cause__, errors.BadRequest)


def test_asset_creation_does_not_wait_on_other_errors(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/assets").respond(404, json=error("NOT_FOUND", "File not found"))
    with pytest.raises(errors.NotFound):
        client.create_asset_when_uploaded(FileAssetInput(type="pdf", fileId="f_1"))
    assert route.call_count == 1


def test_asset_update_sends_only_the_fields_given(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/assets/a_1").respond(200, json=ASSET)
    client.update_asset("a_1", tag_ids=[], is_internal=False, properties=["tags.title", "isInternal"])
    assert json.loads(route.calls.last.request.content) == {"tagIds": [], "isInternal": False}


def test_asset_update_with_nothing_to_change_is_refused(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError):
        client.update_asset("a_1")
    assert router.calls.call_count == 0


def test_asset_name_may_not_be_empty(client: WorkspaceClient) -> None:
    with pytest.raises(ValidationError):
        client.update_asset("a_1", name="")


def test_file_status_is_read_with_its_property(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/files/f_1").respond(200, json=data("file", {"id": "f_1", "uploadStatus": "in_progress"}))
    assert client.get_file("f_1", properties=["uploadStatus"]).uploadStatus == "in_progress"
    assert route.calls.last.request.url.params.get_list("properties[]") == ["uploadStatus"]
    assert client.stats.by_class == {"file_retrieval": 1}


def test_waiting_for_a_file_polls_until_it_is_no_longer_in_progress(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock
) -> None:
    busy = respx.MockResponse(200, json=data("file", {"id": "f_1", "uploadStatus": "in_progress"}))
    route = router.get("/files/f_1").mock(side_effect=[
        busy, busy, respx.MockResponse(200, json=data("file", {"id": "f_1", "uploadStatus": "ready"})),
    ])
    assert client.wait_for_file_ready("f_1", poll_interval=5).uploadStatus == "ready"
    assert route.call_count == 3 and clock.slept == 10


def test_waiting_for_a_file_is_bounded(router: respx.Router, client: WorkspaceClient, clock: VirtualClock) -> None:
    route = router.get("/files/f_1").respond(200, json=data("file", {"id": "f_1", "uploadStatus": "in_progress"}))
    with pytest.raises(errors.NotReadyInTime, match="still in_progress after 12 seconds") as info:
        client.wait_for_file_ready("f_1", poll_interval=5, timeout=12)
    assert route.call_count == 4  # at 0, 5, 10 and 12 seconds
    assert clock.slept == 12
    assert info.value.last is not None


def test_asset_creation_sends_properties_and_parses_the_asset(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/assets").respond(201, json=data("asset", {
        "id": "a_1", "object": "asset", "name": "Deck", "assetType": "microsoftPowerPointEmbedPdf",
        "assetUrl": "https://cdn.example/a_1", "tags": [{"id": "t_1", "object": "tag", "title": "Sales"}]}))
    asset = client.create_asset(FileAssetInput(type="ppt", fileId="f_1", name="Deck"),
                                properties=["name", "assetType", "assetUrl", "tags.title"])
    assert route.calls.last.request.url.params.get_list("properties[]") == [
        "name", "assetType", "assetUrl", "tags.title"]
    assert (asset.name, asset.assetType, asset.assetUrl) == ("Deck", "microsoftPowerPointEmbedPdf",
                                                           "https://cdn.example/a_1")
    assert asset.tags is not None and [(t.id, t.title) for t in asset.tags] == [("t_1", "Sales")]


def test_asset_creation_when_uploaded_sends_the_same_body_each_time(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.post("/assets").mock(side_effect=[
        respx.MockResponse(400, json=NOT_UPLOADED), respx.MockResponse(201, json=ASSET)])
    client.create_asset_when_uploaded(FileAssetInput(type="docx", fileId="f_1", name="Terms"),
                                      properties=["assetType"])
    sent = [(json.loads(c.request.content), c.request.url.params.get_list("properties[]")) for c in route.calls]
    assert sent == [({"type": "docx", "fileId": "f_1", "name": "Terms"}, ["assetType"])] * 2


def test_asset_update_sends_name_and_description(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/assets/a_1").respond(200, json=ASSET)
    client.update_asset("a_1", name="Pricing 2027", description="")
    assert json.loads(route.calls.last.request.content) == {"name": "Pricing 2027", "description": ""}


def test_asset_update_sends_properties_and_parses_the_tags(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/assets/a_1").respond(200, json=data("asset", {
        "id": "a_1", "isInternal": True, "tags": [{"id": "t_2", "title": "Legal"}, {"id": "t_3", "title": "2027"}]}))
    asset = client.update_asset("a_1", tag_ids=["t_2", "t_3"], properties=["isInternal", "tags.title"])
    assert route.calls.last.request.url.params.get_list("properties[]") == ["isInternal", "tags.title"]
    assert json.loads(route.calls.last.request.content) == {"tagIds": ["t_2", "t_3"]}
    assert asset.isInternal is True
    assert asset.tags is not None and [t.title for t in asset.tags] == ["Legal", "2027"]


def test_file_property_outside_the_documented_ones_is_refused(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError, match="'fileName'"):
        client.get_file("f_1", properties=["fileName"])
    assert router.calls.call_count == 0


def test_file_url_is_parsed(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/files/f_1").respond(200, json=data("file", {
        "id": "f_1", "uploadStatus": "ready", "url": "https://cdn.example/f_1.pdf"}))
    file = client.get_file("f_1", properties=["uploadStatus", "url"])
    assert (file.uploadStatus, file.url) == ("ready", "https://cdn.example/f_1.pdf")
