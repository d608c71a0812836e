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

from collections.abc import Callable

from reconciler.manifest import DesiredAsset
from reconciler.plan.cost import STORAGE_CLASS
from reconciler.plan.model import AssetChange, AssetField, ApiCall
from reconciler.state import AssetRecord, State

CONVERTED_TYPES = frozenset({"docx", "ppt", "xlsx"})


def plan_assets(
    assets: tuple[DesiredAsset, ...], state: State, *, scope: Callable[[str], bool], reassert: bool
) -> tuple[list[AssetChange], list[str]]:
    """One change per asset that differs from what the state recorded, and
    a warning per asset whose creation may or may not have happened."""
    changes, warnings = [], []
    for asset in assets:
        if not scope(asset.address):
            continue
        resource = state.resources.get(asset.address)
        record = resource.asset if resource is not None else None
        if record is not None and not resource.id and (record.orphan or (record.uncertain and asset.file is None)):  # type: ignore[union-attr]
            warnings.append(_doubt_warning(asset, orphan=bool(record.orphan)))
            continue
        change = plan_asset(asset, state, reassert=reassert)
        if change is not None:
            changes.append(change)
    return changes, warnings


def _doubt_warning(asset: DesiredAsset, *, orphan: bool) -> str:
    what = ("the service said its file already backs an asset: an earlier apply created it and lost the answer"
            if orphan else "an earlier apply sent its creation and got no answer, so it may exist already")
    fix = "" if orphan else f", or, if it does not exist, 'reconciler state rm {asset.address}' to create it"
    return (f"{asset.location}: {asset.address}: {what}, and the API cannot list assets to tell which. Nothing is "
            f"planned for it: find it in the web app and run 'reconciler import {asset.address} ASSET_ID'{fix}.")


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
    fields = [f for f in _managed_fields(asset) if reassert or _wanted(asset, f) != getattr(record, f)]
    if not fields:
        return None
    return AssetChange(
        action="update",
        address=asset.address,
        location=str(asset.location),
        asset_type=asset.type,
        asset_id=resource.id,
        **_fields(asset),
        patch=tuple(fields),
        before={f: _recorded(record, f) for f in fields},
        calls=(ApiCall(method="PATCH", path=f"/assets/{resource.id}"),),
        reason="re-asserted (--reassert)" if reassert else "differs from what was last applied",
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
    patch = tuple(f for f in ("description", "internal") if _after_creation(asset, f))
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
        action="replace" if replaces else "create",
        address=asset.address,
        location=str(asset.location),
        asset_type=asset.type,
        asset_id=replaces,
        **_fields(asset),
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


def _fields(asset: DesiredAsset) -> dict[str, object]:
    return {"name": asset.name, "description": asset.description, "tags": asset.tags, "internal": asset.internal}


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
