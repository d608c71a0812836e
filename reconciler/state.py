"""The state file: what only this tool knows.

The service cannot tell which access entries this tool put there, so for a
non-authoritative list the state remembers what was last applied: an entry
that leaves the manifest is removed only if the state says we added it.

Layout follows Terraform's: ``version``, ``lineage`` (a random id fixed at
creation, so a plan made against one state is never applied to another),
``serial`` (bumped on every write) and ``resources`` keyed by address.
Writes go to a temp file, are fsynced, then ``os.replace``d, so a crash
leaves either the old or the new file, never half of one.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reconciler.errors import StateError

STATE_VERSION = 1
DEFAULT_STATE_NAME = "reconciler.state.json"


class AccessRecord(BaseModel):
    """The access entries this tool manages on one list: email/domain → role
    as last applied, and since when each has been managed
    (``"user:<email>"`` / ``"domain:<domain>"`` → ``YYYY-MM-DD``)."""

    model_config = ConfigDict(extra="forbid")
    users: dict[str, str] = Field(default_factory=dict)
    domains: dict[str, str] = Field(default_factory=dict)
    since: dict[str, str] = Field(default_factory=dict)


class AssetRecord(BaseModel):
    """What was last applied to an asset; none of it can be read back.

    ``file_id`` and ``uploaded`` are written as soon as they are true, so an
    apply interrupted between the upload and the asset's creation resumes
    with the same file.  ``None`` fields are unknown (never written by this
    tool, or imported).
    """

    model_config = ConfigDict(extra="forbid")
    type: str | None = None
    file: str | None = None
    digest: str | None = None
    file_id: str | None = None
    uploaded: bool | None = None
    url: str | None = None
    custom_code: str | None = None
    metadata: dict[str, float] | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    internal: bool | None = None


class ResourceState(BaseModel):
    """What this tool knows of one address.

    ``id`` is the workspace (or, for ``asset.*``, the asset) the address is
    bound to; empty while an asset's file exists but the asset does not yet.  The rest are facts the
    service cannot read back: the access entries last applied, the homepage
    a member was last connected to (membership is not a workspace property),
    the template a workspace was created from by this tool, and the section,
    page and task values last written (``None``: never written).
    """

    model_config = ConfigDict(extra="forbid")
    id: str
    access: AccessRecord | None = None
    connected_to: str | None = None
    template: str | None = None
    sections: dict[str, bool] | None = None
    pages: dict[str, bool] | None = None
    tasks: dict[str, bool] | None = None
    asset: AssetRecord | None = None

    def setting(self, kind: str, item_id: str) -> bool | None:
        """The value last written to section/page/task ``item_id``, if known."""
        values: dict[str, bool] | None = getattr(self, f"{kind}s")
        return None if values is None else values.get(item_id)


class State(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = STATE_VERSION
    # Empty until the first write: a missing state file must load the same way
    # every time, or a plan saved before the first apply would never match.
    lineage: str = ""
    serial: int = 0
    resources: dict[str, ResourceState] = Field(default_factory=dict)

    def access_record(self, address: str) -> AccessRecord | None:
        resource = self.resources.get(address)
        return resource.access if resource is not None else None

    def known_ids(self) -> set[str]:
        """Every workspace id some address is bound to."""
        return {r.id for r in self.resources.values() if r.id}

    def with_resource(self, address: str, workspace_id: str, **facts: object) -> State:
        """A copy where ``address`` is bound to ``workspace_id`` with ``facts``
        merged into what was known (a different id starts afresh)."""
        resources = dict(self.resources)
        old = resources.get(address)
        base = old.model_dump() if old is not None and old.id == workspace_id else {"id": workspace_id}
        resources[address] = ResourceState.model_validate({**base, **facts})
        return self.model_copy(update={"resources": resources})

    def with_setting(self, address: str, workspace_id: str, kind: str, item_id: str, value: bool) -> State:
        """A copy that records ``value`` as last written to one section/page/task."""
        old = self.resources.get(address)
        known = old.model_dump().get(f"{kind}s") if old is not None and old.id == workspace_id else None
        return self.with_resource(address, workspace_id, **{f"{kind}s": {**(known or {}), item_id: value}})

    def without(self, address: str) -> State:
        resources = {a: r for a, r in self.resources.items() if a != address}
        return self.model_copy(update={"resources": resources})


def default_state_path(manifest_path: Path) -> Path:
    """``reconciler.state.json`` beside the manifests."""
    base = manifest_path if manifest_path.is_dir() else manifest_path.parent
    return base / DEFAULT_STATE_NAME


def load_state(path: Path) -> State:
    """Read the state file; a missing file is an empty state with no lineage yet."""
    if not path.exists():
        return State()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StateError(f"Cannot read the state file {path}: {exc}.") from exc
    if isinstance(raw, dict) and raw.get("version") not in (None, STATE_VERSION):
        raise StateError(
            f"The state file {path} has version {raw.get('version')!r}; this reconciler "
            f"reads version {STATE_VERSION}. Upgrade reconciler."
        )
    try:
        return State.model_validate(raw)
    except ValidationError as exc:
        raise StateError(f"The state file {path} is not a valid state: {exc.errors()[0]['msg']}.") from exc


def write_state(path: Path, state: State) -> State:
    """Write ``state`` with its serial bumped, atomically; returns what was written."""
    new = state.model_copy(update={"serial": state.serial + 1, "lineage": state.lineage or str(uuid.uuid4())})
    # Unknown facts are left out rather than written as null: smaller files,
    # and a state written by this version reads the same in the last one.
    text = new.model_dump_json(indent=2, exclude_none=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StateError(f"Cannot write the state file {path}: {exc}.") from exc
    return new


class StateLock:
    """An exclusive lock file beside the state, naming who holds it.

    ``O_CREAT | O_EXCL`` is atomic on every local filesystem, so two applies
    can never both believe they hold the lock.
    """

    def __init__(self, state_path: Path, *, command: str) -> None:
        self.path = state_path.with_name(state_path.name + ".lock")
        self.command = command

    def __enter__(self) -> StateLock:
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": sys.executable,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            raise StateError(self._held_message()) from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(holder, handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.path.unlink(missing_ok=True)

    def _held_message(self) -> str:
        try:
            info = json.loads(self.path.read_text(encoding="utf-8"))
            who = (
                f"'{info.get('command')}' (pid {info.get('pid')} on {info.get('host')}, "
                f"since {info.get('since')})"
            )
        except (OSError, json.JSONDecodeError):
            who = "an unknown process"
        return (
            f"The state is locked by {who}: another apply is running against "
            f"{self.path.with_suffix('')}. Wait for it to finish; if that process is gone, "
            f"delete {self.path}."
        )
