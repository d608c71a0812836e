from __future__ import annotations

import hashlib

import httpx
import pytest

PDF = b"%PDF-1.7 pretend"


def _new_file(client, name="deck.pdf", mime="application/pdf"):
    response = client.post("/files", json={"fileName": name, "mimeType": mime})
    assert response.status_code == 201
    return response.json()["data"]


def _upload(client, upload, content=PDF, content_type=None):
    # The upload target is "the storage provider": no bearer token.
    return client.request(upload["method"], upload["url"], content=content,
                          headers={"Content-Type": content_type or upload["headers"]["Content-Type"],
                                   "Authorization": ""})


def _uploaded_file(client, name="deck.pdf", mime="application/pdf"):
    data = _new_file(client, name, mime)
    assert _upload(client, data["upload"]).status_code == 200
    return data["file"]["id"]


def test_create_file_returns_in_progress_file_and_upload_target(client, clock):
    data = _new_file(client)
    assert data["file"] == {"id": data["file"]["id"], "uploadStatus": "in_progress", "url": None}
    upload = data["upload"]
    assert upload["method"] == "PUT" and upload["headers"] == {"Content-Type": "application/pdf"}
    assert upload["url"].startswith(f"http://emulator.test/uploads/{data['file']['id']}?token=")
    assert upload["expiresAt"] == "2027-01-15T09:00:00.000Z"


def test_upload_keeps_size_and_digest(client, emulator):
    data = _new_file(client)
    assert _upload(client, data["upload"]).status_code == 200
    stored = emulator.store.companies["acme"].file(data["file"]["id"])
    assert stored.size == len(PDF) and stored.sha256 == hashlib.sha256(PDF).hexdigest()


def test_upload_with_another_content_type_is_refused(client):
    data = _new_file(client)
    assert _upload(client, data["upload"], content_type="application/octet-stream").status_code == 403
    assert _upload(client, data["upload"], content_type="application/pdf; charset=binary").status_code == 403


def test_upload_after_an_hour_is_refused(client, clock):
    data = _new_file(client)
    clock.advance(3600)
    assert _upload(client, data["upload"]).status_code == 403


def test_upload_with_a_wrong_token_is_refused(client):
    data = _new_file(client)
    upload = dict(data["upload"], url=data["upload"]["url"].split("?")[0] + "?token=forged")
    assert _upload(client, upload).status_code == 403


def test_asset_before_the_upload_is_400_and_retry_succeeds(client):
    data = _new_file(client)
    body = {"type": "pdf", "name": "Pricing", "fileId": data["file"]["id"]}
    first = client.post("/assets", json=body)
    assert first.status_code == 400
    assert first.json()["error"]["message"] == (
        f"The bytes of file {data['file']['id']} have not been uploaded yet; retry after the upload.")
    _upload(client, data["upload"])
    assert client.post("/assets", json=body).status_code == 201


def test_asset_marks_its_file_ready(client, props):
    file_id = _uploaded_file(client)
    response = client.post("/assets", json={"type": "pdf", "name": "Pricing", "fileId": file_id},
                           params=props("name", "assetType"))
    assert response.json()["data"]["asset"]["assetType"] == "pdf"
    file = client.get(f"/files/{file_id}", params=props("uploadStatus")).json()["data"]["file"]
    assert file == {"id": file_id, "object": "file", "uploadStatus": "ready"}


def test_a_file_backs_exactly_one_asset(client):
    file_id = _uploaded_file(client)
    assert client.post("/assets", json={"type": "pdf", "name": "One", "fileId": file_id}).status_code == 201
    second = client.post("/assets", json={"type": "pdf", "name": "Two", "fileId": file_id})
    assert second.status_code == 409 and second.json()["error"]["code"] == "CONFLICT"


@pytest.mark.parametrize(("kind", "returned", "mime"), [
    ("docx", "microsoftWordEmbedPdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("ppt", "microsoftPowerPointEmbedPdf", "application/vnd.ms-powerpoint"),
    ("xlsx", "microsoftExcelEmbedPdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
])
def test_office_files_convert_in_the_background(client, props, clock, kind, returned, mime):
    file_id = _uploaded_file(client, f"doc.{kind}", mime)
    asset = client.post("/assets", json={"type": kind, "name": "Doc", "fileId": file_id}, params=props("assetType"))
    assert asset.status_code == 201 and asset.json()["data"]["asset"]["assetType"] == returned
    status = lambda: client.get(f"/files/{file_id}", params=props("uploadStatus")).json()["data"]["file"]["uploadStatus"]  # noqa: E731
    assert status() == "in_progress"
    clock.advance(29)
    assert status() == "in_progress"
    clock.advance(1)
    assert status() == "ready"


def test_link_asset_needs_a_url(client, props):
    assert client.post("/assets", json={"type": "link", "name": "Site"}).status_code == 400
    response = client.post("/assets", json={"type": "link", "name": "Site", "url": "https://acme.com"},
                           params=props("assetUrl", "assetType"))
    assert response.status_code == 201
    assert response.json()["data"]["asset"]["assetUrl"] == "https://acme.com"


def test_embed_asset_takes_exactly_one_of_url_and_custom_code(client):
    code = "<iframe src='https://cal.example/acme'></iframe>"
    assert client.post("/assets", json={"type": "embed", "name": "Cal"}).status_code == 400
    assert client.post("/assets", json={"type": "embed", "name": "Cal", "url": "https://cal.example",
                                        "customCode": code}).status_code == 400
    assert client.post("/assets", json={"type": "embed", "name": "Cal", "customCode": code}).status_code == 201


@pytest.mark.parametrize("code", ["", "   ", "\n\t"], ids=["empty", "spaces", "newline and tab"])
def test_embed_asset_with_an_empty_or_blank_custom_code_is_400_and_creates_nothing(client, emulator, code):
    before = list(emulator.store.companies["acme"].assets)
    response = client.post("/assets", json={"type": "embed", "name": "Cal", "customCode": code})
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "BAD_REQUEST", "message": "customCode must not be empty or blank."}
    assert emulator.store.companies["acme"].assets == before


def test_metadata_is_for_video_and_audio_only(client):
    video = _uploaded_file(client, "tour.mp4", "video/mp4")
    assert client.post("/assets", json={"type": "video", "name": "Tour", "fileId": video,
                                        "metadata": {"width": 1920, "height": 1080}}).status_code == 400
    assert client.post("/assets", json={"type": "video", "name": "Tour", "fileId": video,
                                        "metadata": {"width": 1920, "height": 1080, "duration": 93}}).status_code == 201
    pdf = _uploaded_file(client)
    assert client.post("/assets", json={"type": "pdf", "name": "P", "fileId": pdf,
                                        "metadata": {"duration": 1}}).status_code == 400


def test_unknown_type_or_tag_is_400(client):
    assert client.post("/assets", json={"type": "gif", "name": "x", "url": "https://x.io"}).status_code == 400
    assert client.post("/assets", json={"type": "link", "name": "x", "url": "https://x.io",
                                        "tagIds": ["tag_nope"]}).status_code == 400


def test_patch_asset_replaces_tags_and_keeps_omitted_fields(client, props):
    asset = client.post("/assets", json={"type": "link", "name": "Site", "url": "https://acme.com",
                                         "tagIds": ["tag_123"]}).json()["data"]["asset"]
    new_tag = client.post("/tags", json={"title": "launch"}).json()["data"]["tag"]["id"]
    response = client.patch(f"/assets/{asset['id']}", json={"tagIds": [new_tag], "isInternal": True},
                            params=props("name", "isInternal", "tags.title"))
    assert response.status_code == 200
    body = response.json()["data"]["asset"]
    assert body["name"] == "Site" and body["isInternal"] is True
    assert [t["title"] for t in body["tags"]] == ["launch"]
    assert body["tags"][0]["object"] == "tag"


def test_patch_asset_rejects_an_empty_name(client):
    asset = client.post("/assets", json={"type": "link", "name": "Site", "url": "https://acme.com"}).json()
    assert client.patch(f"/assets/{asset['data']['asset']['id']}", json={"name": ""}).status_code == 400


def test_tag_titles_are_unique(client):
    assert client.post("/tags", json={"title": "Launch"}).status_code == 201
    assert client.post("/tags", json={"title": "launch"}).status_code == 409


def test_file_retrieval_has_its_own_rate_class(client):
    file_id = _new_file(client)["file"]["id"]
    statuses = [client.get(f"/files/{file_id}").status_code for _ in range(61)]
    assert statuses[:60] == [200] * 60 and statuses[60] == 429
    assert client.get(f"/files/{file_id}").headers["X-RateLimit-Limit"] == "60"


def test_another_companys_file_is_404(client, make_client):
    file_id = _new_file(client)["file"]["id"]
    assert make_client("token-globex").get(f"/files/{file_id}").status_code == 404


def test_upload_over_real_http(seed_path):
    from reconciler.emulator import Emulator
    from reconciler.emulator.server import start_background_server

    emulator = Emulator.from_seed_file(seed_path)
    base_url, stop = start_background_server(emulator)
    try:
        with httpx.Client(base_url=f"{base_url}/v1", headers={"Authorization": "Bearer token-acme"}) as http:
            data = http.post("/files", json={"fileName": "a.pdf", "mimeType": "application/pdf"}).json()["data"]
            assert data["upload"]["url"].startswith(base_url)
            put = httpx.put(data["upload"]["url"], content=PDF, headers={"Content-Type": "application/pdf"})
            assert put.status_code == 200
            asset = http.post("/assets", json={"type": "pdf", "name": "A", "fileId": data["file"]["id"]})
            assert asset.status_code == 201
    finally:
        stop()


def test_upload_just_before_the_hour_is_accepted(client, clock):
    data = _new_file(client)
    clock.advance(3599)
    assert _upload(client, data["upload"]).status_code == 200


def test_upload_target_is_on_the_same_server_without_bearer_or_rate_limit(make_client, make_emulator):
    emulator = make_emulator(rate_limits={"default": 1})
    client = make_client(target=emulator)
    data = _new_file(client)  # uses the one default-class request of the minute
    upload = client.put(data["upload"]["url"], content=PDF, headers={"Content-Type": "application/pdf",
                                                                     "Authorization": ""})
    assert upload.status_code == 200
    assert "X-RateLimit-Remaining" not in upload.headers
    assert client.get("/workspaces").status_code == 429


def test_uploading_to_a_file_that_backs_an_asset_is_refused(client):
    data = _new_file(client)
    assert _upload(client, data["upload"]).status_code == 200
    assert client.post("/assets", json={"type": "pdf", "name": "P", "fileId": data["file"]["id"]}).status_code == 201
    assert _upload(client, data["upload"], content=b"%PDF other").status_code == 403


@pytest.mark.parametrize(("kind", "mime"), [("image", "image/png"), ("htmlPage", "text/html"),
                                            ("video", "video/mp4"), ("audio", "audio/mpeg")])
def test_other_file_types_keep_their_type_and_are_ready_at_once(client, props, kind, mime):
    file_id = _uploaded_file(client, f"media.{kind}", mime)
    asset = client.post("/assets", json={"type": kind, "fileId": file_id}, params=props("assetType", "name"))
    assert asset.status_code == 201
    assert asset.json()["data"]["asset"]["assetType"] == kind
    assert asset.json()["data"]["asset"]["name"] == f"media.{kind}"   # defaults to the file name
    file = client.get(f"/files/{file_id}", params=props("uploadStatus")).json()["data"]["file"]
    assert file["uploadStatus"] == "ready"


def test_patch_asset_with_empty_tag_ids_removes_every_tag(client, props):
    asset = client.post("/assets", json={"type": "link", "name": "Site", "url": "https://acme.com",
                                         "tagIds": ["tag_123"]}).json()["data"]["asset"]
    response = client.patch(f"/assets/{asset['id']}", json={"tagIds": []}, params=props("tags.title", "name"))
    assert response.status_code == 200
    assert response.json()["data"]["asset"]["tags"] == []
    assert response.json()["data"]["asset"]["name"] == "Site"


def test_patch_asset_without_tag_ids_keeps_the_tags(client, props):
    asset = client.post("/assets", json={"type": "link", "name": "Site", "url": "https://acme.com",
                                         "tagIds": ["tag_123"]}).json()["data"]["asset"]
    response = client.patch(f"/assets/{asset['id']}", json={"name": "Home page"}, params=props("tags.title"))
    assert [t["title"] for t in response.json()["data"]["asset"]["tags"]] == ["pricing"]


def test_patch_unknown_asset_is_404(client):
    assert client.patch("/assets/asset_nope", json={"name": "x"}).status_code == 404


def test_file_url_is_set_once_the_file_is_ready(client, props):
    file_id = _uploaded_file(client)
    before = client.get(f"/files/{file_id}", params=props("url")).json()["data"]["file"]
    client.post("/assets", json={"type": "pdf", "fileId": file_id})
    after = client.get(f"/files/{file_id}", params=props("url")).json()["data"]["file"]
    assert before["url"] is None
    assert after["url"] == f"http://emulator.test/downloads/{file_id}"
