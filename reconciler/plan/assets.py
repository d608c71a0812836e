"""Plan assets: create, replace or PATCH each one the manifests declare.

The API cannot list assets nor read one back, so every comparison is with
what the state recorded as last applied.  What identifies an asset (its
type, the SHA-256 of its file, its url or embed code, media metadata) cannot
be patched: a change there means a new asset, and since the API has no
delete the old one stays in the service for someone to remove in the web
app; the plan says so.  Name, description, tags and internal are PATCHed.
Pure, like the rest of ``plan/``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import NamedTuple

from reconciler.manifest import DesiredAsset
from reconciler.plan.cost import STORAGE_CLASS
from reconciler.plan.model import Action, ApiCall, AssetChange, AssetField, NeedsPerson, Resolution
from reconciler.state.model import AssetRecord, State

CONVERTED_TYPES = frozenset({"docx", "ppt", "xlsx"})


class CommandPaths(NamedTuple):
    """What the commands a plan prints need to run as shown: the manifests'
    PATH as given, and ``--state FILE`` when the state is not the default."""

    manifest: str = "."
    state: str | None = None
    state_in_postgres: bool = False  # the state is kept in PostgreSQL, not in a file


def plan_assets(
    assets: tuple[DesiredAsset, ...], state: State, *, scope: Callable[[str], bool], reassert: bool,
    paths: CommandPaths = CommandPaths(),
) -> tuple[list[AssetChange], list[NeedsPerson]]:
    """One change per asset that differs from what the state recorded, and
    one ``NeedsPerson`` per asset whose existence only a person can tell."""
    changes, doubts = [], []
    for asset in assets:
        if not scope(asset.address):
            continue
        resource = state.resources.get(asset.address)
        record = resource.asset if resource is not None else None
        if (resource is not None and record is not None and not resource.id
                and (record.orphan or (record.uncertain and asset.file is None))):
            doubts.append(needs_person(asset, record, paths))
            continue
        change = plan_asset(asset, state, reassert=reassert)
        if change is not None:
            changes.append(change)
    return changes, doubts


def needs_person(asset: DesiredAsset, record: AssetRecord, paths: CommandPaths) -> NeedsPerson:
    """What is not known of ``asset``, and the two commands that settle it:
    adopt the asset if it exists, or forget the doubt so the next apply creates it."""
    state = f" --state {shlex.quote(paths.state)}" if paths.state else ""
    where = f"{shlex.quote(paths.manifest)}{state}"
    address = shlex.quote(asset.address)
    adopt = Resolution(when="it exists in the service",
                       command=f"reconciler import {address} ASSET_ID {where}")
    forget = Resolution(when="it does not exist" if not record.orphan else "it was deleted in the web app since",
                        command=f"reconciler state rm {address} {where}")
    named = f' "{asset.name}"' if asset.name else ""
    if record.orphan:
        reason = (f"an earlier apply created it and lost the answer: the service refused a second creation because "
                  f"file {record.file_id} already backs an asset; its id is unknown, so nothing is planned for it")
        check = f"Find the {asset.type} asset{named} ({asset.file_label}) in the web app and note its id."
    else:
        reason = ("an earlier apply sent its creation (POST /assets) and got no answer: it may exist, and the API "
                  "cannot list assets to tell; sending it again could make a second one, so nothing is planned "
                  "for it")
        source = asset.url if asset.url is not None else "custom embed code"
        check = f"Look in the web app for the {asset.type} asset{named} ({source})."
    return NeedsPerson(
        address=asset.address,
        location=str(asset.location),
        cause="file-backs-asset" if record.orphan else "creation-unanswered",
        asset_type=asset.type,
        name=asset.name,
        url=asset.url,
        file_id=record.file_id if record.orphan else None,
        reason=reason,
        check=check,
        resolutions=(adopt, forget),
    )


def plan_asset(asset: DesiredAsset, state: State, *, reassert: bool) -> AssetChange | None:
    resource = state.resources.get(asset.address)
    record = resource.asset if resource is not None else None
    if resource is None or record is None or not resource.id:
        return _create(asset, record)
    changed = identity_changes(asset, record)
    if changed:
        return _create(asset, None, replaces=resource.id, reason=(
            f"{', '.join(changed)} changed: a new asset is made; asset {resource.id} stays in the service "
            "(the API cannot delete it): remove it in the web app"))
    pending = set(record.pending_patch or ())
    fields = [f for f in _managed_fields(asset)
              if reassert or f in pending or _wanted(asset, f) != getattr(record, f)]
    if not fields:
        return None
    reason = ("re-asserted (--reassert)" if reassert else
              "created by an earlier apply, whose PATCH after the creation got no answer: sent now" if pending else
              "differs from what was last applied")
    return AssetChange(
        action=Action.UPDATE,
        address=asset.address,
        location=str(asset.location),
        asset_type=asset.type,
        asset_id=resource.id,
        name=asset.name,
        description=asset.description,
        tags=asset.tags,
        internal=asset.internal,
        patch=tuple(fields),
        before={f: _recorded(record, f) for f in fields},
        calls=(ApiCall(method="PATCH", path=f"/assets/{resource.id}"),),
        reason=reason,
    )


def identity_changes(asset: DesiredAsset, record: AssetRecord) -> list[str]:
    """What identifies the asset and differs from the recorded one."""
    wanted = {"type": asset.type, "file": asset.digest, "url": asset.url, "customCode": asset.custom_code,
              "metadata": _metadata(asset)}
    recorded = {"type": record.type, "file": record.digest, "url": record.url, "customCode": record.custom_code,
                "metadata": record.metadata}
    # An imported asset has nothing recorded: what is unknown is not a change.
    return [key for key, value in wanted.items() if recorded[key] is not None and recorded[key] != value]


def _create(asset: DesiredAsset, record: AssetRecord | None, *, replaces: str | None = None,
            reason: str = "") -> AssetChange:
    resume = (record is not None and record.file_id is not None and bool(record.uploaded)
              and record.digest == asset.digest and record.type == asset.type)
    file_id = record.file_id if resume and record is not None else None
    after_creation: tuple[AssetField, ...] = ("description", "internal")
    patch = tuple(f for f in after_creation if _after_creation(asset, f))
    calls: list[ApiCall] = []
    if asset.file is not None and file_id is None:
        calls += [ApiCall(method="POST", path="/files"),
                  ApiCall(method="PUT", path="(presigned upload address)", limit_class=STORAGE_CLASS)]
    calls.append(ApiCall(method="POST", path="/assets"))
    if patch:
        calls.append(ApiCall(method="PATCH", path="/assets/(new)"))
    if not reason:
        reason = (f"resumes file {file_id}, created and uploaded by an earlier apply" if file_id else
                  "not in the state: created")
    return AssetChange(
        action=Action.REPLACE if replaces else Action.CREATE,
        address=asset.address,
        location=str(asset.location),
        asset_type=asset.type,
        asset_id=replaces,
        name=asset.name,
        description=asset.description,
        tags=asset.tags,
        internal=asset.internal,
        url=asset.url,
        custom_code=asset.custom_code,
        metadata=_metadata(asset),
        file=str(asset.file) if asset.file is not None else None,
        file_label=asset.file_label,
        mime_type=asset.mime_type,
        digest=asset.digest,
        size=asset.size,
        file_id=file_id,
        patch=patch,
        calls=tuple(calls),
        converts=asset.type in CONVERTED_TYPES,
        reason=reason,
    )


def _managed_fields(asset: DesiredAsset) -> list[AssetField]:
    """Fields the manifest manages: name and description only when given."""
    fields: list[AssetField] = ["tags", "internal"]
    if asset.description is not None:
        fields.insert(0, "description")
    if asset.name is not None:
        fields.insert(0, "name")
    return fields


def _wanted(asset: DesiredAsset, field: str) -> object:
    return list(asset.tags) if field == "tags" else getattr(asset, field)


def _recorded(record: AssetRecord, field: str) -> str | bool | list[str] | None:
    value: str | bool | list[str] | None = getattr(record, field)
    return value


def _after_creation(asset: DesiredAsset, field: str) -> bool:
    """Creation takes only the documented fields; description and internal
    follow in a PATCH when they differ from the service's defaults."""
    return asset.description is not None if field == "description" else asset.internal


def _metadata(asset: DesiredAsset) -> dict[str, float] | None:
    if asset.metadata is None:
        return None
    return {k: v for k, v in asset.metadata._asdict().items() if v is not None}
