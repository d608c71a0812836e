from __future__ import annotations

import datetime
from pathlib import Path

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.api.models import UploadTarget
from reconciler.clock import VirtualClock
from tests.api.conftest import BASE, TOKEN, MakeClient

STORAGE_URL = "https://storage.example.net/bucket/f_1?X-Signature=s3cr3tsig"


def _iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).isoformat().replace("+00:00", "Z")


def _target(clock: VirtualClock, *, expires_in: float = 3600, content_type: str = "application/pdf") -> UploadTarget:
    return UploadTarget(url=STORAGE_URL, method="PUT", headers={"Content-Type": content_type},
                        expiresAt=_iso(clock.now() + expires_in))


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "contract.pdf"
    path.write_bytes(b"%PDF-1.7 " + bytes(range(256)) * 1000)
    return path


def test_create_file_returns_the_file_and_its_upload_target(router: respx.Router, client: WorkspaceClient,
                                                            clock: VirtualClock) -> None:
    route = router.post("/files").respond(201, json={"data": {
        "file": {"id": "f_1", "uploadStatus": "in_progress", "url": None},
        "upload": {"url": STORAGE_URL, "method": "PUT", "headers": {"Content-Type": "application/pdf"},
                   "expiresAt": _iso(clock.now() + 3600)},
    }})
    new = client.create_file("contract.pdf", "application/pdf")
    assert route.calls.last.request.read() == b'{"fileName":"contract.pdf","mimeType":"application/pdf"}'
    assert (new.file.id, new.file.uploadStatus, new.file.url) == ("f_1", "in_progress", None)
    assert new.upload.content_type == "application/pdf"


def test_upload_puts_the_bytes_with_exact_content_type_and_no_bearer(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path
) -> None:
    route = router.put(STORAGE_URL).respond(200)
    client.upload_file_bytes(_target(clock, content_type="application/pdf; charset=binary"), document)
    request = route.calls.last.request
    assert "Authorization" not in request.headers
    assert request.headers["Content-Type"] == "application/pdf; charset=binary"
    assert request.headers["Content-Length"] == str(document.stat().st_size)
    assert "Transfer-Encoding" not in request.headers
    assert request.read() == document.read_bytes()
    assert client.stats.by_class == {"storage": 1}


def test_upload_streams_the_file_instead_of_reading_it_whole(
    router: respx.Router, clock: VirtualClock, document: Path
) -> None:
    seen: list[object] = []

    class Recording(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            seen.append(request.stream)
            return httpx.MockTransport(router.handler).handle_request(request)

    router.put(STORAGE_URL).respond(200)
    client = WorkspaceClient(make_http_client(BASE, TOKEN, transport=Recording()), clock=clock)
    client.upload_file_bytes(_target(clock), document)
    assert len(seen) == 1 and not isinstance(seen[0], httpx.ByteStream)


def test_expired_upload_target_is_refused_without_sending(router: respx.Router, client: WorkspaceClient,
                                                          clock: VirtualClock, document: Path) -> None:
    target = _target(clock, expires_in=3600)
    clock.advance(3600)
    with pytest.raises(errors.UploadExpired, match=r"The upload address of the file expired at .*, so nothing was sent\."):
        client.upload_file_bytes(target, document)
    assert router.calls.call_count == 0


def test_storage_refusal_is_upload_failed_without_the_signature(router: respx.Router, client: WorkspaceClient,
                                                                clock: VirtualClock, document: Path) -> None:
    route = router.put(STORAGE_URL).respond(403, text="<Error><Code>SignatureDoesNotMatch</Code></Error>")
    with pytest.raises(errors.UploadFailed) as info:
        client.upload_file_bytes(_target(clock), document)
    assert route.call_count == 1
    assert info.value.path == "/bucket/f_1"
    assert "s3cr3tsig" not in str(info.value)
    assert "SignatureDoesNotMatch" in str(info.value)


def test_upload_is_retried_after_5xx_with_the_whole_file_again(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path
) -> None:
    route = router.put(STORAGE_URL).mock(side_effect=[respx.MockResponse(503), respx.MockResponse(200)])
    client.upload_file_bytes(_target(clock), document)
    assert route.call_count == 2
    assert [c.request.read() for c in route.calls] == [document.read_bytes()] * 2


def test_upload_target_without_content_type_is_refused(make_client: MakeClient, clock: VirtualClock,
                                                       document: Path) -> None:
    target = UploadTarget(url=STORAGE_URL, method="PUT", headers={}, expiresAt=None)
    with pytest.raises(ValueError, match="Content-Type"):
        make_client().upload_file_bytes(target, document)


def test_upload_target_with_unreadable_expiry_is_sent(router: respx.Router, client: WorkspaceClient,
                                                      document: Path) -> None:
    route = router.put(STORAGE_URL).respond(200)
    target = UploadTarget(url=STORAGE_URL, headers={"content-type": "application/pdf"}, expiresAt="soon")
    client.upload_file_bytes(target, document)
    assert route.calls.last.request.headers["Content-Type"] == "application/pdf"


def test_new_file_answer_without_upload_target_is_invalid(router: respx.Router, client: WorkspaceClient) -> None:
    router.post("/files").respond(201, json={"data": {"file": {"id": "f_1"}}})
    with pytest.raises(errors.InvalidResponse, match=r"a NewFile did not have the documented shape \(upload: Field required\)"):
        client.create_file("a.pdf", "application/pdf")


@pytest.mark.parametrize("status", [400, 403, 404])
def test_storage_refusal_status_is_carried_and_not_retried(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path, status: int
) -> None:
    route = router.put(STORAGE_URL).respond(status, text="<Error/>")
    with pytest.raises(errors.UploadFailed) as info:
        client.upload_file_bytes(_target(clock), document)
    assert (info.value.status, info.value.method, info.value.path) == (status, "PUT", "/bucket/f_1")
    assert route.call_count == 1


def test_storage_5xx_after_every_attempt_is_upload_failed(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path
) -> None:
    route = router.put(STORAGE_URL).respond(500)
    with pytest.raises(errors.UploadFailed) as info:
        client.upload_file_bytes(_target(clock), document)
    assert info.value.status == 500 and info.value.attempts == 4
    assert route.call_count == 4


def test_upload_is_retried_after_a_dropped_connection(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path
) -> None:
    route = router.put(STORAGE_URL).mock(side_effect=[httpx.RemoteProtocolError("hung up"), respx.MockResponse(200)])
    client.upload_file_bytes(_target(clock), document)
    assert route.call_count == 2
    assert route.calls.last.request.read() == document.read_bytes()


def test_upload_goes_to_the_presigned_address_with_its_signature(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock, document: Path
) -> None:
    route = router.route(method="PUT", host="storage.example.net").respond(200)
    client.upload_file_bytes(_target(clock), document)
    assert str(route.calls.last.request.url) == STORAGE_URL
    assert route.calls.last.request.method == "PUT"


def test_upload_just_before_expiry_is_sent(router: respx.Router, client: WorkspaceClient, clock: VirtualClock,
                                           document: Path) -> None:
    route = router.put(STORAGE_URL).respond(200)
    target = _target(clock, expires_in=3600)
    clock.advance(3599)
    client.upload_file_bytes(target, document)
    assert route.call_count == 1


def test_upload_target_with_another_method_is_refused(client: WorkspaceClient, document: Path) -> None:
    target = UploadTarget(url=STORAGE_URL, method="POST", headers={"Content-Type": "application/pdf"})
    with pytest.raises(ValueError, match="only PUT"):
        client.upload_file_bytes(target, document)


def test_create_file_needs_a_name_and_a_mime_type(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError):
        client.create_file("", "application/pdf")
    with pytest.raises(ValueError):
        client.create_file("a.pdf", "")
    assert router.calls.call_count == 0
