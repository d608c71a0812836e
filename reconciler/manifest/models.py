"""The manifest file format as pydantic models: one model per YAML mapping.

These mirror the YAML exactly (camelCase keys as written) and are the source
of ``schemas/manifest.schema.json``.  They check shapes and single values
(types, roles, emails, hostnames, dates, key spelling); rules that involve
several fields or several files live in ``rules.py``.  Loaded manifests are
turned into the located ``Desired`` types of ``desired.py``.

Values are normalised here: emails and domains are lower-cased, dates parsed.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

from reconciler.text import printable, shortened

Role = Literal["owner", "editor", "collaborator", "viewer", "commenter"]
ROLES: tuple[str, ...] = get_args(Role)

KEY_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
Key = Annotated[str, StringConstraints(pattern=KEY_PATTERN)]

FILE_ASSET_TYPES: tuple[str, ...] = ("pdf", "image", "docx", "ppt", "xlsx", "htmlPage")
ASSET_TYPES: tuple[str, ...] = (*FILE_ASSET_TYPES[:2], "video", "audio", *FILE_ASSET_TYPES[2:], "link", "embed")

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_LOCAL_PART = re.compile(r"^[a-z0-9!#$%&'*+/=?^_`{|}~.-]+$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_hostname(value: str) -> bool:
    """True for a lower-case DNS name of two or more labels with a non-numeric top label."""
    labels = value.split(".")
    return (
        len(value) <= 253
        and len(labels) >= 2
        and all(_LABEL.match(label) for label in labels)
        and not labels[-1].isdigit()
    )


def _quoted(value: Any) -> str:
    """A manifest value as a message shows it between quotes: one line, at most 80 characters."""
    return printable(shortened(str(value)))


def _email(value: str) -> str:
    lowered = value.strip().lower()
    local, at, host = lowered.rpartition("@")
    if not (at and local and _LOCAL_PART.match(local) and not local.startswith(".") and is_hostname(host)):
        raise PydanticCustomError("manifest", "'{value}' is not an email address", {"value": _quoted(value)})
    return lowered


def _hostname(value: str) -> str:
    lowered = value.strip().lower()
    if not is_hostname(lowered):
        raise PydanticCustomError(
            "manifest", "'{value}' is not a hostname (e.g. customer.com)", {"value": _quoted(value)}
        )
    return lowered


def _iso_date(value: Any) -> Any:
    # YAML turns unquoted 2026-12-01 into a date already; a quoted one stays text.
    # Anything else (a timestamp, a number that pydantic would read as epoch
    # seconds) is refused rather than guessed.
    if isinstance(value, datetime):
        raise PydanticCustomError("manifest", "expected a date (YYYY-MM-DD), got a date and time")
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _ISO_DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError("manifest", "'{value}' is not a calendar date", {"value": value}) from None
    raise PydanticCustomError("manifest", "expected a date (YYYY-MM-DD), got '{value}'", {"value": _quoted(value)})


def _url(value: str) -> str:
    if not re.match(r"^https?://[^\s/?#]+\S*$", value):
        raise PydanticCustomError("manifest", "'{value}' is not an http(s) URL", {"value": _quoted(value)})
    return value


def _version(value: Any) -> Any:
    # Literal[1] alone would also take true and 1.0.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("manifest", "version must be 1, got '{value}'", {"value": _quoted(value)})
    return value


Email = Annotated[str, AfterValidator(_email)]
Hostname = Annotated[str, AfterValidator(_hostname)]
IsoDate = Annotated[date, BeforeValidator(_iso_date)]
Url = Annotated[str, AfterValidator(_url)]
Text = Annotated[str, StringConstraints(min_length=1)]
ServiceId = Annotated[str, StringConstraints(min_length=1, pattern=r"^\S+$")]
PositiveInt = Annotated[int, Field(gt=0)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class UserEntrySpec(_Spec):
    """A user in an access list."""

    email: Email
    role: Role
    expires: IsoDate | None = Field(default=None, description="from this date (UTC) the grant is removed")


class DomainEntrySpec(_Spec):
    """Everyone whose email is in this domain gets the role."""

    domain: Hostname
    role: Role
    expires: IsoDate | None = Field(default=None, description="from this date (UTC) the grant is removed")


class AccessSpec(_Spec):
    """A workspace's (or a group's) access list."""

    users: tuple[UserEntrySpec, ...] = ()
    domains: tuple[DomainEntrySpec, ...] = ()
    authoritative: StrictBool = Field(
        default=True, description="true: entries not listed are removed; false: they are left alone"
    )
    notify: StrictBool = Field(default=False, description="notify people of their new access")
    message: str | None = Field(default=None, description="sent with the notification")


class HiddenSpec(_Spec):
    hidden: StrictBool


class CompletedSpec(_Spec):
    completed: StrictBool


class DealSpec(_Spec):
    """The CRM deal a template workspace is created for: exactly one id."""

    crmOneDealId: ServiceId | None = None
    crmTwoOpportunityId: ServiceId | None = None


# Declared in each model rather than inherited, so that they come after id
# in the schema and in "allowed keys" messages.
Visibility = dict[ServiceId, HiddenSpec]
Completion = dict[ServiceId, CompletedSpec]


class MemberSpec(_Spec):
    """A group member: an existing workspace (id) or one created from a template."""

    id: ServiceId | None = Field(default=None, description="an existing workspace, connected into the group")
    template: ServiceId | None = Field(default=None, description="create from this template (uses a credit)")
    name: Text | None = None
    startDate: IsoDate | None = None
    targetEndDate: IsoDate | None = None
    actualEndDate: IsoDate | None = None
    deal: DealSpec | None = None
    sections: Visibility = Field(default_factory=dict, description="section id → hidden")
    pages: Visibility = Field(default_factory=dict, description="page id → hidden")
    tasks: Completion = Field(default_factory=dict, description="plan task id → completed")


class GroupSpec(_Spec):
    """A connection group: one homepage, one access list, its members."""

    homepage: ServiceId = Field(description="id of an existing workspace; the group's homepage")
    access: AccessSpec | None = None
    workspaces: dict[Key, MemberSpec] = Field(default_factory=dict)


class WorkspaceSpec(_Spec):
    """A standalone existing workspace."""

    id: ServiceId
    access: AccessSpec | None = None
    sections: Visibility = Field(default_factory=dict, description="section id → hidden")
    pages: Visibility = Field(default_factory=dict, description="page id → hidden")
    tasks: Completion = Field(default_factory=dict, description="plan task id → completed")


class _AssetSpec(_Spec):
    type: str  # narrowed to a Literal by each asset kind; declared here to come first
    name: Text | None = None
    description: str | None = None
    tags: tuple[ServiceId, ...] = Field(default=(), description="ids of existing tags")
    internal: StrictBool = False


class _FileAssetSpec(_AssetSpec):
    file: Text = Field(description="relative to the manifest file; must stay inside the manifest root")
    mimeType: Text | None = Field(default=None, description="guessed from the file extension when absent")


class DocumentAssetSpec(_FileAssetSpec):
    type: Literal["pdf", "image", "docx", "ppt", "xlsx", "htmlPage"]


class VideoMetadataSpec(_Spec):
    width: PositiveInt
    height: PositiveInt
    duration: Seconds


class AudioMetadataSpec(_Spec):
    duration: Seconds


class VideoAssetSpec(_FileAssetSpec):
    type: Literal["video"]
    metadata: VideoMetadataSpec | None = None


class AudioAssetSpec(_FileAssetSpec):
    type: Literal["audio"]
    metadata: AudioMetadataSpec | None = None


class LinkAssetSpec(_AssetSpec):
    type: Literal["link"]
    url: Url


class EmbedAssetSpec(_AssetSpec):
    """Exactly one of url and customCode (checked in rules.py)."""

    type: Literal["embed"]
    url: Url | None = None
    customCode: Text | None = None


AssetSpec = Annotated[
    DocumentAssetSpec | VideoAssetSpec | AudioAssetSpec | LinkAssetSpec | EmbedAssetSpec,
    Field(discriminator="type"),
]


NonNegativeInt = Annotated[int, Field(ge=0)]


class PolicySpec(_Spec):
    """Rules every plan of these manifests must keep (one file may hold the policy)."""

    allowedDomains: tuple[Hostname, ...] | None = Field(
        default=None, description="emails and domains outside these (and their subdomains) may not be granted")
    maxRoleOutside: Role | None = Field(
        default=None, description="outside allowedDomains, grants up to this role are allowed")
    protectedOwners: tuple[Email, ...] = Field(
        default=(), description="must stay owner wherever listed; never revoked or downgraded by this tool")
    maxRevocations: NonNegativeInt | None = Field(default=None, description="most access entries one plan revokes")
    maxEscalations: NonNegativeInt | None = Field(default=None, description="most roles one plan raises")
    maxNotified: NonNegativeInt | None = Field(default=None, description="most people one apply emails")


class ManifestSpec(_Spec):
    """One manifest file."""

    version: Annotated[Literal[1], BeforeValidator(_version)] = Field(description="manifest format version")
    groups: dict[Key, GroupSpec] = Field(default_factory=dict, description="connection groups")
    workspaces: dict[Key, WorkspaceSpec] = Field(
        default_factory=dict, description="standalone existing workspaces (not in a group)"
    )
    assets: dict[Key, AssetSpec] = Field(default_factory=dict)
    policy: PolicySpec | None = Field(default=None, description="access policy checked on every plan")
