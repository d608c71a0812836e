"""Apply one asset change: upload, create, PATCH; the state after each step.

A file asset takes up to four calls: ``POST /files``, ``PUT`` of the bytes
to the presigned address, ``POST /assets``, and a ``PATCH`` for the fields
creation does not take (description, internal).  Each step is recorded in
the state and saved (one journal line, fsynced) before the next call, so an
apply interrupted after the upload resumes with the same file instead of
uploading again.

The file is read once: its bytes are hashed, compared with the digest the
plan was made from, and those same bytes are uploaded, so what was reviewed
is what is sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.bodies import AssetMetadata, EmbedAssetInput, FileAssetInput, LinkAssetInput
from reconciler.api.errors import (
    ApiError,
    Conflict,
    ConnectionFailed,
    NotReadyInTime,
    ServerError,
    UploadExpired,
    UploadFailed,
)
from reconciler.errors import ApplyError, ReconcilerError
from reconciler.plan.model import Action, AssetChange
from reconciler.state import AssetRecord, State, StateBuilder

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient

Save = Callable[[], None]  # records what changed in the state so far (a journal line)
SaveState = Callable[[State], State]
Say = Callable[[str], None]
AMBIGUOUS = (ServerError, ConnectionFailed)


def apply_asset(client: WorkspaceClient, change: AssetChange, state: State, *, save: SaveState, say: Say,
                wait: bool) -> State:
    """Make one asset change; returns ``state`` with every step recorded,
    each step given to ``save`` as it happens.

    For a caller holding a ``State``: each save copies the whole map.  Apply
    records in place instead (``apply_asset_in_place``)."""
    builder = StateBuilder(state)

    def save_step() -> None:
        save(builder.state())
        builder.commit()

    apply_asset_in_place(client, change, builder, save=save_step, say=say, wait=wait)
    return builder.state()


def apply_asset_in_place(client: WorkspaceClient, change: AssetChange, state: StateBuilder, *, save: Save,
                         say: Say, wait: bool) -> None:
    """Make one asset change, recording every step in ``state``; the steps
    before the last call are saved as they happen, the last by the caller."""
    if change.action == Action.UPDATE:
        _patch(client, change, change.asset_id or "", _record_of(state, change), state, fields=change.patch)
        return
    record = AssetRecord(type=change.asset_type, file=change.file_label, digest=change.digest,
                         url=change.url, custom_code=change.custom_code, metadata=change.metadata)
    file_id = change.file_id
    if change.file is not None:
        if file_id is None:
            file_id = _upload(client, change, record, state, save=save)
        record = record.model_copy(update={"file_id": file_id, "uploaded": True})
    # Recorded before the call (Pulumi's pending operation): an apply killed
    # while it is in flight leaves the doubt in the state, not a blank.
    pending = record.model_copy(update={"file_id": file_id, "uploaded": True if file_id else None,
                                        "uncertain": True})
    _with_asset(state, change.address, "", pending)
    save()
    try:
        asset_id = _create(client, change, file_id)
    except _LostCreation as lost:
        if lost.orphan:
            _with_asset(state, change.address, "", pending.model_copy(update={"orphan": True}))
            save()
        raise ApplyError(lost.message) from lost.__cause__
    except (ApiError, NotReadyInTime) as exc:
        if not isinstance(exc, AMBIGUOUS):
            # Refused outright: nothing was created, the doubt goes.
            _with_asset(state, change.address, "", pending.model_copy(update={"uncertain": None}))
            save()
        raise
    # Creation sets name and tags; description and internal keep the service's
    # defaults until the PATCH that follows, recorded as a step of its own: the
    # id is known, so a PATCH that gets no answer is sent by the next apply.
    record = record.model_copy(update={"name": change.name, "tags": list(change.tags), "internal": False,
                                       "pending_patch": list(change.patch) or None})
    _with_asset(state, change.address, asset_id, record)
    save()
    if change.action == Action.REPLACE:
        say(f"{change.address}: new asset {asset_id}; the old asset {change.asset_id} stays in the service "
            "(the API cannot delete it): remove it in the web app")
    else:
        say(f"{change.address}: created asset {asset_id}")
    if change.patch:
        try:
            _patch(client, change, asset_id, record, state, fields=change.patch)
        except ApiError as exc:
            raise PartlyMade(exc, f"asset {asset_id} was created and recorded in the state (its PATCH of "
                                  f"{', '.join(change.patch)} is left for the next apply, which sends it)") from exc
    if change.converts and file_id is not None:
        _conversion(client, change, file_id, say=say, wait=wait)


def _upload(client: WorkspaceClient, change: AssetChange, record: AssetRecord, state: StateBuilder, *,
            save: Save) -> str:
    """Create the file and PUT its bytes; a refused or expired upload gets one fresh file."""
    data = _read_checked(change)
    assert change.mime_type is not None and change.file is not None
    for attempt in (1, 2):
        try:
            new = client.create_file(Path(change.file).name, change.mime_type)
        except AMBIGUOUS:
            # A file that may exist unused is harmless (it backs no asset): make another.
            new = client.create_file(Path(change.file).name, change.mime_type)
        pending = record.model_copy(update={"file_id": new.file.id, "uploaded": False})
        _with_asset(state, change.address, "", pending)
        save()
        try:
            client.upload_file_bytes(new.upload, data)
        except (UploadExpired, UploadFailed) as exc:
            if attempt == 2 or (isinstance(exc, UploadFailed) and exc.status not in (403, None)):
                raise
            continue
        _with_asset(state, change.address, "", pending.model_copy(update={"uploaded": True}))
        save()
        return new.file.id
    raise AssertionError("unreachable")  # pragma: no cover


def _read_checked(change: AssetChange) -> bytes:
    assert change.file is not None
    try:
        data = Path(change.file).read_bytes()
    except OSError as exc:
        raise ApplyError(f"{change.address} ({change.location}): cannot read {change.file_label}: "
                         f"{exc.strerror}.") from exc
    if hashlib.sha256(data).hexdigest() != change.digest:
        raise ApplyError(
            f"{change.address} ({change.location}): {change.file_label} changed since the plan was made "
            "(its SHA-256 differs), so it was not uploaded. Run 'reconciler plan' again and review it."
        )
    return data


def _create(client: WorkspaceClient, change: AssetChange, file_id: str | None) -> str:
    tags = change.tags or None
    if file_id is not None:
        meta = AssetMetadata(**change.metadata) if change.metadata else None
        body = FileAssetInput(type=change.asset_type, fileId=file_id, name=change.name, tagIds=tags,  # type: ignore[arg-type]  # asset_type is one of the file types: plan/assets.py made it so
                              metadata=meta)
        # One file backs one asset: sending it again after a lost answer is safe,
        # a creation the lost call made is refused with 409.
        for attempt in (1, 2):
            try:
                return client.create_asset_when_uploaded(body).id
            except AMBIGUOUS:
                if attempt == 2:
                    raise
            except Conflict as exc:
                raise _LostCreation(
                    f"{change.address} ({change.location}): the service says file {file_id} already backs an "
                    "asset: an earlier call created it and its answer was lost, so its id is unknown. "
                    f"{_SETTLE}", orphan=True,
                ) from exc
    body_input = (LinkAssetInput(url=change.url or "", name=change.name, tagIds=tags) if change.asset_type == "link"
                  else EmbedAssetInput(url=change.url, customCode=change.custom_code, name=change.name, tagIds=tags))
    try:
        return client.create_asset(body_input).id
    except AMBIGUOUS as exc:
        # Sending it again could make a second asset, and nothing can list them to check.
        raise _LostCreation(
            f"{change.address} ({change.location}): {exc} The asset may or may not have been created, and the "
            f"API cannot list assets to tell, so it is not sent again. {_SETTLE}"
        ) from exc


# The commands need PATH and --state, which the plan knows: it prints them whole.
_SETTLE = ("'reconciler plan' lists it as needing a person, with the commands that settle it (an import if it "
           "exists, a state rm if not).")


class PartlyMade(Exception):
    """A change of several calls failed after some of them were made; ``made`` says which."""

    def __init__(self, cause: ApiError, made: str) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.made = made


class _LostCreation(Exception):
    """The asset's creation answer was lost; ``message`` says what to do.
    ``orphan``: the service proved it exists (the 409 of a second try)."""

    def __init__(self, message: str, *, orphan: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.orphan = orphan


def _patch(client: WorkspaceClient, change: AssetChange, asset_id: str, record: AssetRecord,
           state: StateBuilder, *, fields: tuple[str, ...]) -> None:
    values = {"name": change.name, "description": change.description, "tag_ids": list(change.tags),
              "is_internal": change.internal}
    wanted = {"tags": "tag_ids", "internal": "is_internal"}
    client.update_asset(asset_id, **{wanted.get(f, f): values[wanted.get(f, f)] for f in fields})  # type: ignore[arg-type]  # each field's value has its own type; the keys are update_asset's
    updates: dict[str, object] = {f: (list(change.tags) if f == "tags" else getattr(change, f)) for f in fields}
    updates["pending_patch"] = None
    _with_asset(state, change.address, asset_id, record.model_copy(update=updates))


def _conversion(client: WorkspaceClient, change: AssetChange, file_id: str, *, say: Say, wait: bool) -> None:
    if not wait:
        say(f"{change.address}: file {file_id} is being converted to PDF in the background; "
            "'reconciler apply --wait' follows conversions to the end")
        return
    say(f"{change.address}: waiting for the conversion of file {file_id}")
    try:
        client.wait_for_file_ready(file_id)
    except ReconcilerError as exc:
        raise ApplyError(f"{change.address} ({change.location}): {exc}") from exc
    say(f"{change.address}: file {file_id} converted")


def _record_of(state: StateBuilder, change: AssetChange) -> AssetRecord:
    resource = state.get(change.address)
    return resource.asset if resource is not None and resource.asset is not None else AssetRecord()


def _with_asset(state: StateBuilder, address: str, asset_id: str, record: AssetRecord) -> None:
    state.bind(address, asset_id, asset=record.model_dump())

