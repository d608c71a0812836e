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

import errno as errno_module
import json
import os
import shlex
import socket
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
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
    # The asset's creation was sent and not answered (recorded before the
    # call, as Pulumi records a pending operation): it may exist.  A file
    # asset is simply tried again (one file backs one asset: a second creation
    # is refused); a link or embed is not, as nothing can tell.
    uncertain: bool | None = None
    # The service refused a creation because the file backs an asset already:
    # it exists, and its id is unknown until someone imports it.
    orphan: bool | None = None


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
    """Write ``state`` with its serial bumped, atomically; returns what was written.

    Raises ``StateWriteError`` when the write fails (a full disk, an I/O
    error); the file then still holds what it held before, byte for byte.
    """
    new = state.model_copy(update={"serial": state.serial + 1, "lineage": state.lineage or str(uuid.uuid4())})
    # Unknown facts are left out rather than written as null: smaller files,
    # and a state written by this version reads the same in the last one.
    text = new.model_dump_json(indent=2, exclude_none=True) + "\n"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_temp(path, text.encode("utf-8"))
        try:
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StateWriteError(path, exc.errno, previous_serial=state.serial if existed else None,
                              detail=exc.strerror or str(exc)) from exc
    _fsync_directory(path.parent)
    return new


class StateWriteError(StateError):
    """The state file could not be written (a full disk, an I/O error).

    The file still holds what it held before the write, byte for byte:
    ``previous_serial`` is its serial (``None`` when there was no file yet,
    and none was written).  ``path`` is the state file and ``errno`` the
    operating system's error code (``errno.ENOSPC`` for a full disk), so a
    caller can say what was changed in the service and not recorded.
    """

    def __init__(self, path: Path, errno: int | None, *, previous_serial: int | None,
                 detail: str | None = None) -> None:
        self.path = path
        self.errno = errno
        self.previous_serial = previous_serial
        kept = (f"The file still holds serial {previous_serial}, as before this write."
                if previous_serial is not None else "There was no state file before, and none was written.")
        super().__init__(f"Cannot write the state file {path}: {_os_reason(errno, detail)}. {kept}")


def _os_reason(code: int | None, detail: str | None = None) -> str:
    """``No space left on device (ENOSPC)``: the words and the code to search for."""
    if code is None:
        return detail or "unknown error"
    return f"{os.strerror(code)} ({errno_module.errorcode.get(code, code)})"


def _write_temp(target: Path, data: bytes, *, mode: int | None = None) -> Path:
    """``data`` in a new, fsynced temp file beside ``target``; on any failure
    the temp file is removed and the error raised."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` survive a power loss; best effort (not
    every platform can open a directory), as the rename itself succeeded."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_path(state_path: Path) -> Path:
    """The lock file of ``state_path``: the same name with ``.lock`` added."""
    return state_path.with_name(state_path.name + ".lock")


# Where hard links do not exist (some network and FUSE filesystems), link()
# fails with one of these; the lock then falls back to O_CREAT | O_EXCL.
_NO_HARD_LINKS = {errno_module.EPERM, errno_module.EOPNOTSUPP, errno_module.ENOTSUP, errno_module.ENOSYS}


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as its file says; what the file lacks is ``None``."""

    id: str | None = None
    pid: int | None = None
    host: str | None = None
    command: str | None = None
    since: str | None = None

    @classmethod
    def read(cls, lock: Path) -> LockHolder | None:
        """The holder named in ``lock``: ``None`` when there is no lock file,
        a holder with no id when the file is empty or unreadable."""
        try:
            info = json.loads(lock.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return cls()
        if not isinstance(info, dict):
            return cls()

        def text(key: str) -> str | None:
            value = info.get(key)
            return value if isinstance(value, str) and value else None

        pid = info.get("pid")
        return cls(id=text("id"), pid=pid if type(pid) is int else None, host=text("host"),
                   command=text("command"), since=text("since"))

    def running(self) -> bool | None:
        """Whether the holder's process still runs: known only for a holder
        on this host (``None`` otherwise; another machine is never guessed).
        A pid reused by another program reads as running: the safe mistake."""
        if os.name != "posix" or self.host != socket.gethostname() or self.pid is None or self.pid <= 0:
            return None
        try:
            os.kill(self.pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except OSError:
            return True  # EPERM: it exists, under another user
        return True

    def describe(self) -> str:
        """``'reconciler apply' (pid 12 on ci-7, since ..., lock ID ...)``."""
        return (f"'{self.command}' (pid {self.pid} on {self.host}, since {self.since}, lock ID {self.id})")


def remove_lock(state_path: Path, lock_id: str) -> bool:
    """Remove the lock of ``state_path`` if it carries ``lock_id``; ``False``
    when there is no lock or it is another one."""
    lock = lock_path(state_path)
    holder = LockHolder.read(lock)
    if holder is None or holder.id != lock_id:
        return False
    lock.unlink(missing_ok=True)
    return True


class StateLock:
    """An exclusive lock file beside the state, naming who holds it.

    The holder (a random lock id, pid, host, command, start time) is written
    to a temp file, fsynced, then hard-linked to the lock's name.  ``link``
    fails when that name exists, atomically, so two commands can never both
    hold the lock; and a lock file is complete or absent: a full disk fails
    the temp file, never leaves an empty lock.  A lock left by a process that
    is gone is reported (naming a dead holder on this host as such) and is
    removed only by ``reconciler force-unlock ID``.

    The directory is created when missing; one that cannot be created or
    written is a ``StateError`` before anything else happens.
    """

    def __init__(self, state_path: Path, *, command: str) -> None:
        self.state_path = state_path
        self.path = lock_path(state_path)
        self.command = command
        self.id = uuid.uuid4().hex

    def __enter__(self) -> StateLock:
        holder = {
            "id": self.id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": sys.executable,
        }
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(
                f"Cannot use the state file {self.state_path}: the directory {directory} does not exist and "
                f"cannot be created ({exc.strerror or exc}). Choose another place with --state FILE. "
                "Nothing was changed."
            ) from exc
        try:
            taken = self._take((json.dumps(holder) + "\n").encode("utf-8"))
        except BaseException as exc:
            self._release()  # interrupted after the link: the lock is ours, and goes
            if isinstance(exc, OSError):
                raise StateError(self._cannot_lock(exc)) from exc
            raise
        if not taken:
            raise StateError(self._held_message())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release()

    def _take(self, data: bytes) -> bool:
        """Create the lock file holding ``data``; ``False`` when it exists."""
        tmp = _write_temp(self.path, data, mode=0o644)
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            return self._take_without_link(data)
        finally:
            tmp.unlink(missing_ok=True)
        return True

    def _take_without_link(self, data: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            self.path.unlink(missing_ok=True)  # an empty lock would read as "an unknown process"
            raise
        return True

    def _release(self) -> None:
        """Remove the lock file if it is still this lock (it may have been
        force-unlocked and taken by another command since)."""
        remove_lock(self.state_path, self.id)

    def _cannot_lock(self, exc: OSError) -> str:
        if exc.errno in (errno_module.EACCES, errno_module.EPERM, errno_module.EROFS):
            return (
                f"Cannot use the state file {self.state_path}: the directory {self.path.parent} is not writable "
                f"({exc.strerror or exc}); the state and its lock are written there. Choose a writable place "
                "with --state FILE. Nothing was changed."
            )
        return (f"Cannot take the lock {self.path}: {_os_reason(exc.errno, exc.strerror)}; no lock file was "
                "left behind. Nothing was changed.")

    def _held_message(self) -> str:
        state, lock = self.state_path, self.path
        holder = LockHolder.read(lock)
        if holder is None:
            return (f"The state {state} was locked by another command, which has just finished. "
                    "Run the command again.")
        if holder.id is None:
            return (f"The state {state} is locked by an unknown process: the lock file {lock} is empty or "
                    "unreadable (written by an older reconciler, or by hand), and has no lock ID. If no "
                    f"reconciler command is running against this state, delete {lock}.")
        unlock = f"reconciler force-unlock {holder.id} --state {shlex.quote(str(state))}"
        if holder.running() is False:
            return (
                f"The state {state} is locked by '{holder.command}' (lock ID {holder.id}, since {holder.since}), "
                f"held by pid {holder.pid} on this host, which is no longer running: it was killed or crashed, "
                f"and may have changed the service without recording it. Remove the lock with '{unlock}', "
                "then run 'reconciler plan' to see where things stand."
            )
        return (
            f"The state {state} is locked by {holder.describe()}: another command is running against it. "
            f"Wait for it to finish. If that process is gone (a cancelled CI job, a machine that went away), "
            f"remove the lock with '{unlock}'."
        )
