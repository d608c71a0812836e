"""The manifest file format as pydantic models: one model per YAML mapping.

These mirror the YAML exactly (camelCase keys as written) and are the source
of ``schemas/manifest.schema.json``.  They check shapes and single values
(types, roles, emails, hostnames, dates, key spelling); rules that involve
several fields or several files live in ``rules.py``.  Loaded manifests are
turned into the located ``Desired`` types of ``desired.py``.

Values are normalised here: emails and domains are lower-cased, dates parsed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Annotated, Any, Literal, NotRequired

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    Tag,
    WithJsonSchema,
    with_config,
)
from typing_extensions import TypedDict  # on Python 3.11 pydantic takes typing_extensions' TypedDict only
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from reconciler.manifest.values import (
    MAX_EMAIL_LENGTH,
    MAX_HOSTNAME_LENGTH,
    email_problem,
    glob_problem,
    hostname_problem,
    id_problem,
    shown,
    url_problem,
)
from reconciler.text import printable, shortened
from reconciler.vocabulary import Role


KEY_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
Key = Annotated[str, StringConstraints(pattern=KEY_PATTERN)]

FILE_ASSET_TYPES: tuple[str, ...] = ("pdf", "image", "docx", "ppt", "xlsx", "htmlPage")
ASSET_TYPES: tuple[str, ...] = (*FILE_ASSET_TYPES[:2], "video", "audio", *FILE_ASSET_TYPES[2:], "link", "embed")

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # fullmatch: no trailing newline, no other digits


def _quoted(value: Any) -> str:
    """A manifest value as a message shows it between quotes: one line, at most 80 characters."""
    return printable(shortened(str(value)))


def _refused(value: str, what: str, problem: str, *, ascii_only: bool = False) -> PydanticCustomError:
    """The error for a value that is not ``what``; ``problem`` says why when there is more to say.

    pydantic fills the template one key after another, so the manifest's own
    text comes last: a value holding "{why}" is then shown as written."""
    return PydanticCustomError("manifest", "{value} is not {what}" + ("; {why}" if problem else ""),
                               {"what": what, "why": problem, "value": shown(value, ascii_only=ascii_only)})


# The same people and domains are named on many lists of a manifest: each distinct value is
# checked once (why it is refused, None when it is not).
_checked_email = functools.lru_cache(maxsize=8192)(email_problem)
_checked_hostname = functools.lru_cache(maxsize=8192)(hostname_problem)


def _email(value: str) -> str:
    problem = _checked_email(value)
    if problem is not None:
        raise _refused(value, "an email address", problem, ascii_only=True)
    return value.lower()


def _hostname(value: str) -> str:
    problem = _checked_hostname(value)
    if problem is not None:
        raise _refused(value, "a hostname (e.g. customer.com)", problem, ascii_only=True)
    return value.lower()


def _service_id(value: str) -> str:
    problem = id_problem(value)
    if problem is not None:
        raise PydanticCustomError("manifest_id", "{value} is not an id as the service shows it: {why}",
                                  {"why": problem, "value": shown(value)})
    return value


def _iso_date(value: Any) -> Any:
    # YAML turns unquoted 2026-12-01 into a date already; a quoted one stays text.
    # Anything else (a timestamp, a number that pydantic would read as epoch
    # seconds) is refused rather than guessed.
    if isinstance(value, datetime):
        raise PydanticCustomError("manifest", "expected a date (YYYY-MM-DD), got a date and time")
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError("manifest", "'{value}' is not a calendar date", {"value": value}) from None
    raise PydanticCustomError("manifest", "expected a date (YYYY-MM-DD), got '{value}'", {"value": _quoted(value)})


def _url(value: str) -> str:
    problem = url_problem(value)
    if problem is not None:
        raise _refused(value, "an http(s) URL", problem)
    return value


def _version(value: Any) -> Any:
    # Literal[1] alone would also take true and 1.0.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("manifest", "version must be 1, got '{value}'", {"value": _quoted(value)})
    return value


# The usual email and hostname as pydantic's own (Rust) regular expressions: every one they
# take, the checks in values.py take too, and lower-case the same (a property test holds them to
# it).  Anything else (a top label starting with a digit, an empty label, a space, a Kelvin sign)
# is left to the whole check, for the verdict and its reason.
# Rust's regex engine runs in time linear in the text (no backtracking); \A and \z are the very
# ends of the text (a Python ``$`` would let a trailing newline through).
_QUICK_LOCAL = r"[A-Za-z0-9!#$%&'*+/=?^_{}~-][A-Za-z0-9!#$%&'*+/=?^_{}~.-]{0,63}"
_QUICK_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_QUICK_TOP_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"  # starting with a letter: not a number
_QUICK_HOST = rf"(?:{_QUICK_LABEL}\.)+{_QUICK_TOP_LABEL}"
QUICK_EMAIL_PATTERN = rf"\A{_QUICK_LOCAL}@{_QUICK_HOST}\z"
QUICK_HOSTNAME_PATTERN = rf"\A{_QUICK_HOST}\z"
# The labels of the two ways a value is checked, as pydantic puts them at the end of an error's loc.
QUICK_CHECK, WHOLE_CHECK = "(quick check)", "(whole check)"


class _QuickOrWhole:
    """A text checked by a pattern, or else by a Python function.

    A manifest of 10,000 lists names 250,000 people and domains; calling a
    Python check from pydantic for each took half of all validation.  The
    usual value passes ``pattern`` inside pydantic and is lower-cased there;
    only a value the pattern does not take reaches ``whole`` (a union, tried
    left to right).  A value both refuse has an error of each; messages.py
    keeps the whole check's, which says why.
    """

    def __init__(self, pattern: str, max_length: int, whole: Callable[[str], str]) -> None:
        self.pattern = pattern
        self.max_length = max_length
        self.whole = whole

    def quick_schema(self) -> core_schema.CoreSchema:
        return core_schema.str_schema(pattern=self.pattern, max_length=self.max_length, to_lower=True)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        whole = core_schema.no_info_after_validator_function(self.whole, core_schema.str_schema())
        return core_schema.union_schema([(self.quick_schema(), QUICK_CHECK), (whole, WHOLE_CHECK)],
                                        mode="left_to_right")

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string"}  # the JSON Schema stays as it was: the checks are the tool's, not an editor's


QUICK_EMAIL = _QuickOrWhole(QUICK_EMAIL_PATTERN, MAX_EMAIL_LENGTH, _email)
QUICK_HOSTNAME = _QuickOrWhole(QUICK_HOSTNAME_PATTERN, MAX_HOSTNAME_LENGTH, _hostname)
Email = Annotated[str, QUICK_EMAIL]
Hostname = Annotated[str, QUICK_HOSTNAME]
IsoDate = Annotated[date, BeforeValidator(_iso_date)]
Url = Annotated[str, AfterValidator(_url)]
Text = Annotated[str, StringConstraints(min_length=1)]
# Checked by _service_id; the schema's pattern says the same to editors (tag
# characters aside: a JSON Schema pattern cannot name characters beyond U+FFFF).
ServiceId = Annotated[str, AfterValidator(_service_id), WithJsonSchema({
    "type": "string",
    "minLength": 1,
    "pattern": "^(?!\\.\\.?$)[^\\s/?#%\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160"
               "\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u2800\\u3164"
               "\\ud800-\\uf8ff\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\uffff]+$",
})]
# Strict: YAML's false, "3" and 3.0 are not whole numbers (lax pydantic would
# read false as a cap of 0), as the schema's "type": "integer" says.
PositiveInt = Annotated[StrictInt, Field(gt=0)]
Seconds = Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)]  # a whole number is a number too


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# The entries are TypedDicts, not models: a manifest of 10,000 lists has 250,000 of them, and
# pydantic checks a dict for less than half of what it takes to make a model of it.  Validation
# fills in ``expires`` (None) when it is absent, as a model's default would.
@with_config(ConfigDict(extra="forbid"))
class UserEntrySpec(TypedDict):
    """A user in an access list."""

    email: Email
    role: Role
    expires: NotRequired[Annotated[IsoDate | None, Field(
        default=None, description="from this date (UTC) the grant is removed")]]


@with_config(ConfigDict(extra="forbid"))
class DomainEntrySpec(TypedDict):
    """Everyone whose email is in this domain gets the role."""

    domain: Hostname
    role: Role
    expires: NotRequired[Annotated[IsoDate | None, Field(
        default=None, description="from this date (UTC) the grant is removed")]]


class TeamEntrySpec(_Spec):
    """Every member of a team (``teams:``) gets the role."""

    team: Key = Field(description="a key of the manifests' teams:")
    role: Role


class AccessSpec(_Spec):
    """A workspace's (or a group's) access list."""

    users: tuple[UserEntrySpec, ...] = ()
    teams: tuple[TeamEntrySpec, ...] = Field(default=(), description="each member of the team gets the role")
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


NonNegativeInt = Annotated[StrictInt, Field(ge=0)]


def _glob(value: str) -> str:
    problem = glob_problem(value)
    if problem is not None:
        raise PydanticCustomError("manifest", "{value} is not a valid name pattern: {why}",
                                  {"why": problem, "value": shown(value)})
    return value


# A shell-style pattern (fnmatch) on workspace names: * ? [seq] [!seq].
NameGlob = Annotated[str, AfterValidator(_glob)]


class RuleMatchSpec(_Spec):
    """Which workspaces of the company a rule applies to: every key given must
    match (AND); a list matches when any of its items does (OR)."""

    all: Literal[True] | None = Field(default=None, description="every workspace of the company")
    accounts: tuple[ServiceId, ...] | None = Field(default=None, description="workspaces of these account ids")
    templates: tuple[ServiceId, ...] | None = Field(default=None, description="workspaces made from these template ids")
    names: tuple[NameGlob, ...] | None = Field(
        default=None, description="workspace names matching any of these shell-style patterns (*, ?, [abc])")
    except_: tuple[ServiceId, ...] = Field(default=(), alias="except", description="workspace ids never matched")


class RuleEnsureSpec(_Spec):
    """Entries every matched workspace has, with exactly this role."""

    users: tuple[UserEntrySpec, ...] = ()
    teams: tuple[TeamEntrySpec, ...] = ()
    domains: tuple[DomainEntrySpec, ...] = ()


class RuleRevokeSpec(_Spec):
    """Entries no matched workspace keeps, whatever their role."""

    users: tuple[Email, ...] = ()
    domains: tuple[Hostname, ...] = ()
    successor: Email | None = Field(default=None, description=(
        "becomes owner wherever a user revoked here was an owner and no other owner would remain (a handover)"))


class RuleSpec(_Spec):
    """A rule over every workspace of the company, managed by a manifest or not."""

    match: RuleMatchSpec
    ensure: RuleEnsureSpec | None = None
    revoke: RuleRevokeSpec | None = None


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
    minOwners: Annotated[StrictInt, Field(ge=1)] | None = Field(
        default=None, description="fewest owners a workspace should have; the access report flags fewer (default 1)")


# What a manifest calls a workspace or an asset: the addresses of plans and the state.
ADDRESS_PATTERN = re.compile(r"(workspace|group|asset)\.[a-z0-9][a-z0-9-]*(\.workspace\.[a-z0-9][a-z0-9-]*)?")


def _address(value: str) -> str:
    found = ADDRESS_PATTERN.fullmatch(value)
    if found is None or (found.group(2) is not None and found.group(1) != "group"):
        raise PydanticCustomError(
            "manifest", "{value} is not an address: write workspace.KEY, group.KEY, group.KEY.workspace.KEY "
            "or asset.KEY, as plan and 'reconciler state list' show them", {"value": shown(value)})
    return value


Address = Annotated[str, AfterValidator(_address)]


class MovedSpec(_Spec):
    """An address renamed in the manifests: what the state knows of ``from`` is kept under ``to``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, populate_by_name=True)

    from_: Address = Field(alias="from", description="the address as it was")
    to: Address = Field(description="the address now, declared by a manifest")


class TeamFromGroupSpec(_Spec):
    """A team whose members are a group of the directory (``directory:``, written by ``reconciler directory sync``)."""

    directoryGroup: Text = Field(description="the name of a group under directory.groups, as the identity provider spells it")


class DeactivatedSpec(_Spec):
    """A person deactivated or deleted in the identity provider: a leaver, revoked everywhere."""

    since: IsoDate = Field(description="the day (UTC) the directory saw them deactivated or deleted")
    successor: Email | None = Field(default=None, description=(
        "becomes owner wherever the leaver was the last owner (their manager, when active in the directory)"))


class DirectorySpec(_Spec):
    """The company's directory as ``reconciler directory sync`` writes it (directory.yaml); at most one file holds it."""

    groups: dict[Text, tuple[Email, ...]] = Field(
        default_factory=dict, description="each group by name, its active members' emails")
    deactivated: dict[Email, DeactivatedSpec] = Field(
        default_factory=dict, description="every leaver by email: revoked from every workspace of the company")


def _team_kind(value: Any) -> str:
    # A mapping naming directoryGroup is a team from the directory; anything else is read (and refused)
    # as a list of emails: "expected a list, got a mapping" says more about {email: ...} than the group's keys.
    return "group" if isinstance(value, dict) and "directoryGroup" in value else "emails"


TeamSpec = Annotated[
    Annotated[tuple[Email, ...], Tag("emails")] | Annotated[TeamFromGroupSpec, Tag("group")],
    Discriminator(_team_kind),
]


class ManifestSpec(_Spec):
    """One manifest file."""

    version: Annotated[Literal[1], BeforeValidator(_version)] = Field(description="manifest format version")
    groups: dict[Key, GroupSpec] = Field(default_factory=dict, description="connection groups")
    workspaces: dict[Key, WorkspaceSpec] = Field(
        default_factory=dict, description="standalone existing workspaces (not in a group)"
    )
    assets: dict[Key, AssetSpec] = Field(default_factory=dict)
    policy: PolicySpec | None = Field(default=None, description="access policy checked on every plan")
    teams: dict[Key, TeamSpec] = Field(
        default_factory=dict, description=("named lists of people, or {directoryGroup: NAME} for a group of the "
                                           "directory; an access list or rule may name a team"))
    rules: dict[Key, RuleSpec] = Field(
        default_factory=dict, description="entries ensured on or revoked from every matching workspace")
    moved: tuple[MovedSpec, ...] = Field(
        default=(), description="addresses renamed: the plan moves them in the state without any call")
    directory: DirectorySpec | None = Field(default=None, description=(
        "the identity provider's groups and leavers, written by reconciler directory sync; one file may hold it"))
