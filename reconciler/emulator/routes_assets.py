"""Assets and tags.

An asset from a file needs the file's bytes uploaded (400 otherwise, to be
retried); a file backs exactly one asset (a second is 409 ``CONFLICT``).
``docx``/``ppt``/``xlsx`` are converted in the background: the asset exists
at once, its file stays ``in_progress`` for ``Emulator.conversion_seconds``
on the clock, then reads ``ready``; every other file type is ``ready`` as
soon as its asset exists.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import properties, render, validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request, conflict, not_found
from reconciler.emulator.routing import Route
from reconciler.emulator.entities import Asset, File, Tag

FILE_TYPES = ("pdf", "image", "video", "audio", "docx", "ppt", "xlsx", "htmlPage")
CONVERTED = ("docx", "ppt", "xlsx")
TYPES = (*FILE_TYPES, "link", "embed")
_METADATA_KEYS = {"video": ("width", "height", "duration"), "audio": ("duration",)}


def _tag_ids(ctx: RequestContext, body: dict[str, Any]) -> list[str] | None:
    ids = validation.string_list(body, "tagIds")
    if ids is None:
        return None
    for tag_id in ids:
        if ctx.co.tag(tag_id) is None:
            raise bad_request(f"Tag {tag_id} not found.")
    return list(dict.fromkeys(ids))


def _metadata(asset_type: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if "metadata" not in body:
        return None
    keys = _METADATA_KEYS.get(asset_type)
    if keys is None:
        raise bad_request(f"metadata applies only to video and audio assets, not {asset_type}.")
    meta = validation.require_object(body["metadata"], "metadata")
    validation.reject_unknown_keys(meta, keys, "metadata")
    for key in keys:
        value = meta.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise bad_request(f"metadata.{key} must be a non-negative number for {asset_type} assets.")
    return dict(meta)


def _source_file(ctx: RequestContext, body: dict[str, Any], asset_type: str) -> File:
    for key in ("url", "customCode"):
        if key in body:
            raise bad_request(f"{key} does not apply to {asset_type} assets; give fileId.")
    file_id = validation.string_field(body, "fileId", required=True)
    file = ctx.co.file(file_id or "")
    if file is None:
        raise bad_request(f"File {file_id} not found.")
    if file.asset_id is not None:
        raise conflict(f"File {file.id} already backs asset {file.asset_id}; one file backs exactly one asset.")
    if not file.uploaded:
        raise bad_request(f"The bytes of file {file.id} have not been uploaded yet; retry after the upload.")
    return file


def create_asset(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.ASSET)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"type", "name", "fileId", "url", "customCode", "tagIds", "metadata"})
    asset_type = body.get("type")
    if asset_type not in TYPES:
        raise bad_request(f"type must be one of {', '.join(TYPES)}.")
    tag_ids = _tag_ids(ctx, body) or []
    metadata = _metadata(asset_type, body)
    file: File | None = None
    url = custom_code = None
    if asset_type in FILE_TYPES:
        file = _source_file(ctx, body, asset_type)
        name = validation.string_field(body, "name", min_length=1) or file.file_name
    else:
        if "fileId" in body:
            raise bad_request(f"fileId does not apply to {asset_type} assets.")
        name = validation.string_field(body, "name", required=True, min_length=1) or ""
        url = validation.string_field(body, "url", required=asset_type == "link")
        custom_code = validation.string_field(body, "customCode")
        if asset_type == "link" and custom_code is not None:
            raise bad_request("customCode applies only to embed assets.")
        if asset_type == "embed" and (url is None) == (custom_code is None):
            raise bad_request("An embed asset takes exactly one of url and customCode.")
        if custom_code is not None and not custom_code.strip():
            # Nothing to embed: the service refuses it rather than show an empty frame (README.md).
            raise bad_request("customCode must not be empty or blank.")
        if url is not None and not url.startswith(("http://", "https://")):
            raise bad_request(f"url must be an http(s) address, not {url!r}.")
    now = ctx.now_iso()
    asset = Asset(ctx.new_id("asset"), asset_type, name, file_id=file.id if file else None, url=url,
                  custom_code=custom_code, tag_ids=tag_ids, metadata=metadata, created_at=now, updated_at=now)
    if file is not None:
        file.asset_id = asset.id
        file.updated_at = now
        if asset_type in CONVERTED:
            file.ready_at = ctx.now() + ctx.shared.conversion_seconds
        else:
            file.upload_status = "ready"
    ctx.co.assets.append(asset)
    ctx.changed()
    return 201, {"data": {"asset": properties.select(render.asset(ctx.base_url, ctx.co, asset), selected)}}


def patch_asset(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.ASSET)
    asset = ctx.co.asset(id)
    if asset is None:
        raise not_found(f"Asset {id} not found.")
    body = ctx.json_body(required=False)
    validation.reject_unknown_keys(body, {"name", "description", "tagIds", "isInternal"})
    name = validation.string_field(body, "name", min_length=1)
    description = validation.string_field(body, "description")
    tag_ids = _tag_ids(ctx, body)
    internal = validation.bool_field(body, "isInternal")
    before = (asset.name, asset.description, list(asset.tag_ids), asset.is_internal)
    asset.name = name if name is not None else asset.name
    asset.description = description if description is not None else asset.description
    asset.tag_ids = tag_ids if tag_ids is not None else asset.tag_ids
    asset.is_internal = internal if internal is not None else asset.is_internal
    if (asset.name, asset.description, asset.tag_ids, asset.is_internal) != before:
        asset.updated_at = ctx.now_iso()
        ctx.changed()
    return 200, {"data": {"asset": properties.select(render.asset(ctx.base_url, ctx.co, asset), selected)}}


def create_tag(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.TAG)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"title"})
    title = validation.string_field(body, "title", required=True, min_length=1) or ""
    existing = next((t for t in ctx.co.tags if t.title.casefold() == title.casefold()), None)
    if existing is not None:
        raise conflict(f"A tag titled {existing.title!r} already exists: {existing.id}.")
    now = ctx.now_iso()
    tag = Tag(ctx.new_id("tag"), title, now, now)
    ctx.co.tags.append(tag)
    ctx.changed()
    return 201, {"data": {"tag": properties.select(render.tag(ctx.base_url, tag), selected)}}


ROUTES: list[Route] = [
    Route("POST", "/v1/assets", create_asset),
    Route("PATCH", "/v1/assets/{id}", patch_asset),
    Route("POST", "/v1/tags", create_tag),
]
