"""The lock file beside a state file: one command at a time writes the state."""

from __future__ import annotations

import contextlib
import errno as errno_module
import fcntl
import json
import os
import shlex
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from reconciler.text import parse_json
from reconciler.errors import StateError
from reconciler.owned_files import MAX_LOCK_BYTES, read_owned
from reconciler.state.atomic import os_reason, write_all, write_temp


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
        a holder with no id when the file is empty or not JSON.  A lock that
        is a link, not a regular file, or over ``MAX_LOCK_BYTES`` was not
        written by reconciler, and one that cannot be read cannot be judged:
        a ``StateError`` saying so."""
        data = read_owned(lock, what="state lock", limit=MAX_LOCK_BYTES, error=StateError,
                          hint=" (reconciler never writes one: delete it)")
        if data is None:
            return None
        try:
            info = parse_json(data)
        except ValueError:
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
        return (f'"{self.command}" (pid {self.pid} on {self.host}, since {self.since}, lock ID {self.id})')


def dead_lock_warning(state_path: Path) -> str | None:
    """What a read-only command (plan) says of a lock left by a holder on this
    host that no longer runs: it may have changed the service without
    recording it.  ``None`` when there is no lock, or its holder runs or runs
    elsewhere (a live apply: plan reads as it always did)."""
    holder = LockHolder.read(lock_path(state_path))
    if holder is None or holder.id is None or holder.running() is not False:
        return None
    unlock = f"reconciler force-unlock {holder.id} --state {shlex.quote(str(state_path))}"
    return (f"The state {state_path} is still locked by \"{holder.command}\" (lock ID {holder.id}, since "
            f"{holder.since}), held by pid {holder.pid} on this host, which is no longer running: it was killed or "
            "crashed, and a change it made may be missing from the state, so this plan may show it as still to "
            f"do. Once you are sure that command is gone, remove the lock with '{unlock}' and apply again: the "
            "apply converges on the manifests.")


def wait_for(take: Callable[[], bool], *, timeout: float, pause: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic, waiting: Callable[[], None] | None = None) -> bool:
    """Call ``take`` until it answers ``True`` or ``timeout`` seconds have
    passed (``--lock-timeout``); ``take`` is tried once when ``timeout`` is 0.
    The pause between tries grows from 0.1 s to 2 s: a waiting command asks
    often at first, then lightly, and never sleeps past the deadline.
    ``waiting`` is called once, before the first pause: a command that waits
    says so (``say_waiting``) rather than hanging without a word."""
    deadline = clock() + timeout
    delay = 0.1
    while not take():
        left = deadline - clock()
        if left <= 0:
            return False
        if waiting is not None:
            waiting()
            waiting = None
        pause(min(delay, left))
        delay = min(delay * 2, 2.0)
    return True


def say_waiting(state: str, timeout: float, holder: str) -> None:
    """Tell the person (stderr) that the command waits for the lock, how long at most, and for whom."""
    sys.stderr.write(f"The state {state} is locked by {holder}; waiting up to {timeout:g}s for it "
                     "(--lock-timeout).\n")
    sys.stderr.flush()


@contextlib.contextmanager
def lock_file_changes(directory: Path) -> Iterator[None]:
    """Hold the state directory's ``flock`` while an existing lock file is
    replaced or removed (a takeover, a release, a force-unlock): each reads
    the lock file, checks whose it is and changes it as one step, so no two
    of them interleave. Taking a free lock needs no ``flock``: a hard link
    to a name that exists fails, and under this ``flock`` the name never
    stops existing. The kernel lets go of it when its process ends, however
    it ends: it never needs a person."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the flock


def remove_lock(state_path: Path, lock_id: str) -> bool:
    """Remove the lock of ``state_path`` if it carries ``lock_id``; ``False``
    when there is no lock or it is another one."""
    lock = lock_path(state_path)
    if not lock.parent.is_dir():
        return False
    with lock_file_changes(lock.parent):
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
    is gone on this host (its pid no longer runs) is taken over, and said so
    (``taken_over``); one held on another host, or by a process that still
    runs, is reported and removed only by ``reconciler force-unlock ID``.
    ``timeout`` seconds (``--lock-timeout``) are waited for a held lock to be
    released before that refusal.

    The directory is created when missing; one that cannot be created or
    written is a ``StateError`` before anything else happens.
    """

    def __init__(self, state_path: Path, *, command: str, timeout: float = 0.0,
                 pause: Callable[[float], None] = time.sleep) -> None:
        self.state_path = state_path
        self.path = lock_path(state_path)
        self.command = command
        self.id = uuid.uuid4().hex
        self.timeout = timeout
        self.pause = pause
        # What was said of a dead holder's lock this one replaced; None when there was none.
        self.taken_over: str | None = None
        self._seen: LockHolder | None = None  # who held the lock at the last refused try

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
        data = (json.dumps(holder) + "\n").encode("utf-8")
        try:
            taken = wait_for(lambda: self._try(data), timeout=self.timeout, pause=self.pause,
                             waiting=lambda: say_waiting(str(self.state_path), self.timeout, self._describe_seen()))
        except BaseException as exc:
            self._release()  # interrupted after the link: the lock is ours, and goes
            if isinstance(exc, OSError):
                raise StateError(self._cannot_lock(exc)) from exc
            raise
        if not taken:
            raise StateError(self._held_message())
        return self

    def _try(self, data: bytes) -> bool:
        """Take the lock (or a dead holder's); when it is held, remember who
        holds it.  A lock released between the failed take and the read of its
        holder is tried again at once, for up to ``_RETRY_SECONDS``: a refusal
        names a holder (a lock taken and released thousands of times a second
        would otherwise be refused without one)."""
        deadline = time.monotonic() + _RETRY_SECONDS
        while True:
            if self._take(data) or self._take_over_dead(data):
                return True
            self._seen = LockHolder.read(self.path)
            if self._seen is not None or time.monotonic() > deadline:
                return False

    def _describe_seen(self) -> str:
        seen = self._seen
        return "an unknown process" if seen is None or seen.id is None else seen.describe()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release()

    def _take(self, data: bytes) -> bool:
        """Create the lock file holding ``data``; ``False`` when it exists."""
        tmp = write_temp(self.path, data, mode=0o644)
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

    def _take_over_dead(self, data: bytes) -> bool:
        """Replace the lock of a holder on this host whose process is gone with
        this one; ``False`` when the holder runs, runs elsewhere, or is unknown.

        The dead lock is replaced in one rename over it, under the directory's
        ``flock`` (``lock_file_changes``), after reading it again there: two
        commands taking over at once, or a takeover and a force-unlock, are
        one after the other, and the lock's name is never free in between for
        a third command to take (two holders at once, found by mutation tests)."""
        holder = LockHolder.read(self.path)
        if holder is None or holder.id is None or holder.running() is not False:
            return False
        with lock_file_changes(self.path.parent):
            now = LockHolder.read(self.path)
            if now is None or now.id != holder.id:
                return False  # released or taken over meanwhile: try again
            tmp = write_temp(self.path, data, mode=0o644)
            try:
                os.replace(tmp, self.path)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        self.taken_over = (
            f"Took over the lock of the state {self.state_path} left by \"{holder.command}\" (lock ID {holder.id}, "
            f"since {holder.since}): pid {holder.pid} on this host is no longer running, so it was killed or "
            "crashed. A change it was making may be missing from the state; this command goes on from what "
            "the state records.")
        return True

    def _take_without_link(self, data: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            try:
                write_all(fd, data)
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
        return (f"Cannot take the lock {self.path}: {os_reason(exc.errno, exc.strerror)}; no lock file was "
                "left behind. Nothing was changed.")

    def _held_message(self) -> str:
        state, lock = self.state_path, self.path
        holder = self._seen
        if holder is None:
            return (f"The state {state} was locked by another command every time this one tried for "
                    f"{_RETRY_SECONDS:g} s, and released before it could be read who: commands are starting and "
                    f"finishing against it in quick succession. {LOCK_TIMEOUT_HINT} Nothing was changed.")
        if holder.id is None:
            return (f"The state {state} is locked by an unknown process: the lock file {lock} is empty or "
                    "unreadable (written by an older reconciler, or by hand), and has no lock ID. If no "
                    f"reconciler command is running against this state, delete {lock}.")
        unlock = f"reconciler force-unlock {holder.id} --state {shlex.quote(str(state))}"
        return (
            f"The state {state} is locked by {holder.describe()}: another command is running against it. "
            f"Wait for it to finish. {LOCK_TIMEOUT_HINT} If that process is gone (a cancelled CI job, a "
            f"machine that went away), remove the lock with '{unlock}'."
        )


# What every refusal of a held lock says of waiting instead (both backends).
LOCK_TIMEOUT_HINT = "--lock-timeout DURATION (e.g. --lock-timeout 5m) waits for it instead of stopping."
# How long one try takes the lock again when it was released before its holder could be read.
_RETRY_SECONDS = 2.0
