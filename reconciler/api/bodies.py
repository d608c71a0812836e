"""Request bodies: strict models of what may be sent.

Strict on purpose (``extra="forbid"``): a misspelt or read-only field is an
error here, not a field the service silently ignores.  Only writable fields
exist on these models; the documented rules that can be checked without the
service (exactly one of two fields, an owner on a replaced access list,
metadata only for media) are checked on construction and raise pydantic's
``ValidationError``.  ``wire()`` gives the JSON body, leaving out fields
not given.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reconciler.api.models import AccessDomainInput, AccessUserInput


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def wire(self) -> dict[str, object]:
        """The JSON body: dates as ``YYYY-MM-DD``, fields not given left out."""
        return self.model_dump(mode="json", exclude_none=True)


class ConnectExisting(RequestBody):
    """Connect an existing workspace to a group (body of the connect call)."""

    workspaceId: Annotated[str, Field(min_length=1)]


class CreateFromTemplate(RequestBody):
    """Create a workspace from a template in a group (body of the connect call).

    Without ``workspaceUsers``/``workspaceDomains`` the new workspace gets the
    group's access; given, they replace the group's lists, and then at least
    one entry must be an owner.  Templates that require a deal need
    ``crmOneDealId`` or ``crmTwoOpportunityId`` (only the service knows which
    templates do).
    """

    templateId: Annotated[str, Field(min_length=1)]
    name: str | None = None
    crmOneDealId: str | None = None
    crmTwoOpportunityId: str | None = None
    startDate: datetime.date | None = None
    targetEndDate: datetime.date | None = None
    actualEndDate: datetime.date | None = None
    workspaceUsers: tuple[AccessUserInput, ...] | None = None
    workspaceDomains: tuple[AccessDomainInput, ...] | None = None

    @model_validator(mode="after")
    def _an_owner_when_access_is_replaced(self) -> CreateFromTemplate:
        if self.workspaceUsers is None and self.workspaceDomains is None:
            return self
        entries: list[AccessUserInput | AccessDomainInput] = [*(self.workspaceUsers or ()),
                                                              *(self.workspaceDomains or ())]
        if not any(e.role == "owner" for e in entries):
            raise ValueError("workspaceUsers/workspaceDomains replace the group's access, so at least one "
                             "user or domain must have the role owner")
        return self


FileAssetType = Literal["pdf", "image", "video", "audio", "docx", "ppt", "xlsx", "htmlPage"]


class AssetMetadata(RequestBody):
    """Media metadata: all three for a video, ``duration`` for an audio."""

    width: float | None = None
    height: float | None = None
    duration: float | None = None


class FileAssetInput(RequestBody):
    """An asset made from an uploaded file (``fileId`` from ``create_file``)."""

    type: FileAssetType
    fileId: Annotated[str, Field(min_length=1)]
    name: Annotated[str, Field(min_length=1)] | None = None
    tagIds: tuple[str, ...] | None = None
    metadata: AssetMetadata | None = None

    @model_validator(mode="after")
    def _metadata_only_for_media(self) -> FileAssetInput:
        meta = self.metadata
        if meta is None:
            return self
        if self.type == "video" and None in (meta.width, meta.height, meta.duration):
            raise ValueError("metadata of a video needs width, height and duration")
        if self.type == "audio" and (meta.width is not None or meta.height is not None or meta.duration is None):
            raise ValueError("metadata of an audio has a duration only")
        if self.type not in ("video", "audio"):
            raise ValueError(f"metadata is for video and audio assets, not {self.type}")
        return self


class LinkAssetInput(RequestBody):
    """A link asset; the service resolves the link preview."""

    type: Literal["link"] = "link"
    url: Annotated[str, Field(min_length=1)]
    name: Annotated[str, Field(min_length=1)] | None = None
    tagIds: tuple[str, ...] | None = None


class EmbedAssetInput(RequestBody):
    """An embed asset: exactly one of ``url`` and ``customCode``."""

    type: Literal["embed"] = "embed"
    url: str | None = None
    customCode: str | None = None
    name: Annotated[str, Field(min_length=1)] | None = None
    tagIds: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _exactly_one_source(self) -> EmbedAssetInput:
        if (self.url is None) == (self.customCode is None):
            raise ValueError("an embed asset needs exactly one of url and customCode")
        return self


AssetInput = Annotated[FileAssetInput | LinkAssetInput | EmbedAssetInput, Field(discriminator="type")]


class AssetUpdate(RequestBody):
    """Fields of an asset to change; fields left ``None`` stay as they are.

    ``tagIds`` replaces the asset's whole tag list (an empty tuple removes
    every tag).
    """

    name: Annotated[str, Field(min_length=1)] | None = None
    description: str | None = None
    tagIds: tuple[str, ...] | None = None
    isInternal: bool | None = None
