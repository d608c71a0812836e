"""Files and their presigned uploads.

``POST /files`` returns an upload target on this same server,
``{base}/uploads/{file_id}?token=...``, standing in for the storage
provider: no bearer token (the URL's token is the credential), no rate
limit, 403 for a bad token, an expired target or a ``Content-Type`` that is
not exactly the file's ``mimeType``.  Only the size and SHA-256 of the bytes
are kept.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from reconciler.emulator import properties, render, validation
from reconciler.emulator.context import EmulatorResponse, RequestContext
from reconciler.emulator.errors import ServiceError, not_found
from reconciler.emulator.routing import FILE_RETRIEVAL, Route
from reconciler.emulator.entities import File
from reconciler.emulator.store import Company, iso

UPLOAD_SECONDS = 3600


def settle_conversion(ctx: RequestContext, file: File) -> None:
    """Finish a background conversion whose time has come.  Conversion is
    evaluated when someone looks, which is indistinguishable from a real
    background job to anyone reading through the API."""
    if file.upload_status == "in_progress" and file.ready_at is not None and ctx.now() >= file.ready_at:
        file.upload_status = "ready"
        file.updated_at = iso(file.ready_at)
        ctx.changed()


def create_file(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    ctx.properties(())  # the response shape is fixed: any properties value is refused
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"fileName", "mimeType"})
    name = validation.string_field(body, "fileName", required=True, min_length=1)
    mime = validation.mime_type(validation.string_field(body, "mimeType", required=True), "mimeType")
    assert name is not None
    now = ctx.now()
    file = File(ctx.new_id("file"), name, mime, secrets.token_urlsafe(24), now + UPLOAD_SECONDS,
                created_at=iso(now), updated_at=iso(now))
    ctx.co.files.append(file)
    ctx.changed()
    return 201, {"data": {
        "file": {"id": file.id, "uploadStatus": file.upload_status, "url": None},
        "upload": {"url": f"{ctx.base_url}/uploads/{file.id}?token={file.upload_token}", "method": "PUT",
                   "headers": {"Content-Type": mime}, "expiresAt": iso(file.expires_at)},
    }}


def get_file(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.FILE)
    file = ctx.co.file(id)
    if file is None:
        raise not_found(f"File {id} not found.")
    settle_conversion(ctx, file)
    return 200, {"data": {"file": properties.select(render.file(ctx.base_url, file), selected)}}


def _owner(ctx: RequestContext, file_id: str, token: str) -> tuple[Company, File] | None:
    for company in ctx.shared.store.companies.values():
        file = company.file(file_id)
        if file is not None and secrets.compare_digest(file.upload_token, token):
            return company, file
    return None


def upload(ctx: RequestContext, id: str) -> EmulatorResponse:
    token = next((v for k, v in ctx.query if k == "token"), "")
    found = _owner(ctx, id, token)
    if found is None:
        raise ServiceError(403, "The upload address is not valid.", code="FORBIDDEN")
    company, file = found
    ctx.company = company  # so the request log names the company
    if ctx.now() >= file.expires_at:
        raise ServiceError(403, "The upload address has expired.")
    if file.asset_id is not None:
        raise ServiceError(403, "The file already backs an asset; its bytes can no longer change.")
    content_type = ctx.headers.get("content-type")
    if content_type != file.mime_type:
        raise ServiceError(403, f"Content-Type must be exactly {file.mime_type!r}, not {content_type!r}.")
    file.size = len(ctx.body)
    file.sha256 = hashlib.sha256(ctx.body).hexdigest()
    file.updated_at = ctx.now_iso()
    ctx.changed()
    return EmulatorResponse(200, {"ETag": f'"{file.sha256[:32]}"'}, b"")


ROUTES: list[Route] = [
    Route("POST", "/v1/files", create_file),
    Route("GET", "/v1/files/{id}", get_file, FILE_RETRIEVAL),
    Route("PUT", "/uploads/{id}", upload, authenticated=False),
]
