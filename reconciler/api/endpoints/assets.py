"""Files, their upload, assets and tags.

An asset made from a file takes three steps: ``create_file`` (POST /files)
gives a file id and a presigned upload address; ``upload_file_bytes`` PUTs
the bytes there; ``create_asset_when_uploaded`` (POST /assets) turns the file
into an asset, waiting while the service does not see the bytes yet.
docx/ppt/xlsx files are then converted in the background, which
``wait_for_file_ready`` follows.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from reconciler.api import properties as props
from reconciler.api.bodies import AssetInput, AssetUpdate, FileAssetInput
from reconciler.api.endpoints.base import EndpointBase, segment, validate
from reconciler.api.errors import BadRequest, NotReadyInTime, UploadExpired
from reconciler.api.models import Asset, File, NewFile, Tag, UploadTarget
from reconciler.api.properties import properties_query
from reconciler.api.responses import BodyError

IN_PROGRESS = "in_progress"
_CHUNK_BYTES = 1 << 16


class AssetEndpoints(EndpointBase):
    def create_file(self, file_name: str, mime_type: str) -> NewFile:
        """Create a file and get its upload address (POST /files).

        The upload must use exactly ``mime_type`` as its Content-Type and
        happen within the hour (``upload.expiresAt``).  Not repeated after a
        5xx or a lost connection (it is a creation).
        """
        if not file_name or not mime_type:
            raise ValueError("create_file needs a file name and a MIME type")
        answer = self.requester.request("POST", "/files", body={"fileName": file_name, "mimeType": mime_type})
        try:
            return validate(NewFile, answer.body.get("data"))
        except BodyError as exc:
            raise self.requester.invalid("POST", "/files", str(exc), status=answer.status) from None

    def upload_file_bytes(self, upload_target: UploadTarget, path: str | os.PathLike[str] | bytes) -> None:
        """PUT the bytes of the file at ``path`` (or ``path`` itself, given
        bytes: what the caller read and hashed, so nothing can change between
        hashing and sending) to the upload address.

        The request goes to the storage provider, not the service: without
        the bearer header, with exactly the headers of ``upload_target``
        (its Content-Type above all) and streamed from disk.  Raises
        ``UploadExpired`` without sending anything when ``expiresAt`` has
        passed by the clock (an ``expiresAt`` that is missing or unreadable
        is not checked), ``ValueError`` for a target without Content-Type or
        with a method other than the documented PUT, ``UploadFailed`` when the
        storage provider refuses.
        """
        if upload_target.method.upper() != "PUT":
            raise ValueError(f"the upload target asks for {upload_target.method}; only PUT is documented")
        if upload_target.content_type is None:
            raise ValueError("the upload target names no Content-Type, and the storage provider "
                             "refuses any but the file's own")
        expires = _epoch(upload_target.expiresAt)
        if expires is not None and self.requester.clock.now() >= expires:
            raise UploadExpired(
                f"The upload address of the file expired at {upload_target.expiresAt} (it is valid for "
                "one hour after the file was created), so nothing was sent. Create the file again "
                "(POST /files) and upload to its new address."
            )
        if isinstance(path, bytes):
            data = path
            self.requester.put_to_storage(upload_target.url, headers=upload_target.headers,
                                          open_body=lambda: iter((data,)), size=len(data))
            return
        source = Path(path)
        size = source.stat().st_size
        self.requester.put_to_storage(upload_target.url, headers=upload_target.headers,
                                      open_body=lambda: _chunks(source), size=size)

    def create_asset(self, asset: AssetInput, *, properties: Sequence[str] = ()) -> Asset:
        """Create an asset (POST /assets).

        The answer is not shown; it is taken to be ``{data: {asset}}`` like
        PATCH /assets/{id}'s, with the same ``properties``.  A file asset
        before its bytes are visible gets 400 ``BadRequest`` (see
        ``create_asset_when_uploaded``).  Not repeated after a 5xx or a lost
        connection: one file backs exactly one asset.
        """
        query = properties_query(properties, props.ASSET, endpoint="POST /assets")
        return self._one("POST", "/assets", "asset", Asset, query=query, body=asset.wire())

    def create_asset_when_uploaded(
        self,
        asset: FileAssetInput,
        *,
        attempts: int = 6,
        first_wait: float = 2.0,
        max_wait: float = 30.0,
        properties: Sequence[str] = (),
    ) -> Asset:
        """Create a file asset, trying again while the service answers 400
        because the uploaded bytes are not visible to it yet.

        At most ``attempts`` tries, waiting ``first_wait`` seconds after the
        first 400 and twice as long after each next one (at most
        ``max_wait``), on the clock.  When every try got 400, raises
        ``NotReadyInTime`` chained to the last ``BadRequest`` (the 400 may also
        mean the request itself is wrong, which the service's code does not
        tell apart).
        """
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, not {attempts}")
        waited = 0.0
        for attempt in range(1, attempts + 1):
            try:
                return self.create_asset(asset, properties=properties)
            except BadRequest as exc:
                if attempt == attempts:
                    raise NotReadyInTime(
                        f"POST /assets still answered 400 after {attempts} attempts over {waited:g} "
                        f"seconds: {exc.message} The bytes of file {asset.fileId} may not have been "
                        "uploaded, or the request may be wrong.",
                        last=exc,
                    ) from exc
                wait = min(max_wait, first_wait * 2 ** (attempt - 1))
                self.requester.pause(wait)
                waited += wait
        raise AssertionError("unreachable")  # pragma: no cover

    def update_asset(
        self,
        asset_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        tag_ids: Sequence[str] | None = None,
        is_internal: bool | None = None,
        properties: Sequence[str] = (),
    ) -> Asset:
        """Change an asset (PATCH /assets/{id}); only the fields given are
        sent, the others stay as they are.  ``tag_ids`` replaces the whole
        tag list (``[]`` removes every tag)."""
        update = AssetUpdate(name=name, description=description, isInternal=is_internal,
                             tagIds=None if tag_ids is None else tuple(tag_ids))
        body = update.wire()
        if not body:
            raise ValueError("update_asset needs at least one field to change")
        path = f"/assets/{segment(asset_id)}"
        query = properties_query(properties, props.ASSET, endpoint="PATCH /assets/{id}")
        return self._one("PATCH", path, "asset", Asset, query=query, body=body)

    def get_file(self, file_id: str, *, properties: Sequence[str] = ()) -> File:
        """One file (GET /files/{id}); ``properties=["uploadStatus"]`` for its
        progress.  The answer is not shown; it is taken to be
        ``{data: {file}}``.  Limited to 60 calls a minute with file retrieval.
        """
        path = f"/files/{segment(file_id)}"
        query = properties_query(properties, props.FILE, endpoint="GET /files/{id}")
        return self._one("GET", path, "file", File, query=query)

    def wait_for_file_ready(self, file_id: str, *, poll_interval: float = 5.0, timeout: float = 900.0) -> File:
        """Poll the file until its ``uploadStatus`` is no longer ``in_progress``
        (a docx/ppt/xlsx being converted) and return it.

        Polls every ``poll_interval`` seconds on the clock; raises
        ``NotReadyInTime`` (with the last file) once ``timeout`` seconds have
        passed.  The name of the ready state is not shown, so any other
        status, or none, counts as done.
        """
        if poll_interval <= 0:
            raise ValueError(f"poll_interval must be positive, not {poll_interval}")
        clock = self.requester.clock
        deadline = clock.now() + timeout
        while True:
            file = self.get_file(file_id, properties=["uploadStatus"])
            if file.uploadStatus != IN_PROGRESS:
                return file
            left = deadline - clock.now()
            if left <= 0:
                raise NotReadyInTime(
                    f"File {file_id} was still {IN_PROGRESS} after {timeout:g} seconds; the service may "
                    "still be converting it. Its asset exists already; check again later.",
                    last=file,
                )
            self.requester.pause(min(poll_interval, left))

    def create_tag(self, title: str) -> Tag:
        """Create a tag (POST /tags).  Only referenced by the description: the
        body is taken to be ``{title}`` and the answer ``{data: {tag}}``."""
        if not title:
            raise ValueError("create_tag needs a title")
        return self._one("POST", "/tags", "tag", Tag, body={"title": title})


def _chunks(path: Path) -> Iterator[bytes]:
    """The file's bytes, a block at a time (the file is closed at the end)."""
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK_BYTES):
            yield block


def _epoch(stamp: str | None) -> float | None:
    """An ISO 8601 date-time as epoch seconds (UTC when no zone is given)."""
    if not stamp:
        return None
    try:
        when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()
