"""The files reconciler itself reads and writes beside the manifests (the
state, its journal and lock, a saved plan, the audit log), opened so that
something planted there cannot redirect them.

A pull request controls what is in the checkout: it can replace
``reconciler.state.json`` with a symbolic link to ``/dev/zero`` (read forever,
then ``MemoryError``), to a file outside the repository (read, and its
content echoed in an error), or make ``plan --out FILE`` a link so that the
write lands elsewhere.  So each of these files is

- refused when it is a symbolic link (``O_NOFOLLOW``: the last component is
  never followed; a link higher up the path is the user's own layout),
- refused when it is not a regular file (a FIFO, a device, a directory),
  opened with ``O_NONBLOCK`` so that even a FIFO cannot hang the open,
- refused unread when it is larger than a documented bound, and read no
  further than that bound should it grow while being read,
- written, when it is written whole, through a temp file beside it, fsynced
  and ``os.replace``d: the replace swaps the directory entry, never writes
  through a link that appeared in between.

Only the standard library (``os``): no maintained library does less, and
this module must stay cheap to import.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from reconciler.errors import ReconcilerError

# The bounds are generous: the state of 50,000 workspaces, every list
# recorded, is 139 MiB in the benchmark (bench/README.md) and 430 MiB with 40
# users and 5 domains per list and every section, page and task recorded
# (tests/test_state_files.py); a journal line holds the whole record of the
# address it changes, so one apply touching every address a few times writes
# a journal a few times that size.  They only stop what reconciler never
# writes: a file a pull request planted, or one grown without end.
MAX_STATE_BYTES = 2 * 2**30         # reconciler.state.json: 2 GiB
MAX_JOURNAL_BYTES = 4 * 2**30       # reconciler.state.json.journal: 4 GiB
MAX_PLAN_BYTES = 2 * 2**30          # a plan saved by 'plan --out': 2 GiB
MAX_LOCK_BYTES = 64 * 2**10         # reconciler.state.json.lock: 64 KiB (it holds one short JSON line)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def size_text(n: int) -> str:
    """``1 GiB``, ``64 KiB``, ``12 bytes``: a bound as a person reads it."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n:,} bytes"


def symlink_refusal(what: str, path: Path, hint: str = "") -> str:
    """Why a link at ``path`` is refused, and what to do."""
    try:
        link = f" (to {os.readlink(path)})"
    except OSError:
        link = ""
    return (f"The {what} {path} is a symbolic link{link}; reconciler does not follow links for its own files, "
            "so that a link planted in the repository cannot make it read or overwrite another file. "
            f"Replace the link with the file itself{hint}. Nothing was changed.")


def is_symlink(path: Path) -> bool:
    """Whether ``path`` itself (its last component) is a symbolic link."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def read_owned(path: Path, *, what: str, limit: int, error: type[ReconcilerError],
               hint: str = "") -> bytes | None:
    """The bytes of ``path``, or ``None`` when there is no such file.

    ``error`` (a ``ReconcilerError`` subclass, so the CLI exits 1 with the
    message) is raised for a link, a file that is not regular, one over
    ``limit`` bytes, or one that cannot be read; ``what`` names the file in
    the message ("state file"), ``hint`` is added to the link's.
    """
    if not _NOFOLLOW and is_symlink(path):  # where O_NOFOLLOW does not exist (Windows)
        raise error(symlink_refusal(what, path, hint))
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or is_symlink(path):  # ELOOP: the last component is a link
            raise error(symlink_refusal(what, path, hint)) from exc
        raise error(f"Cannot read the {what} {path}: {exc.strerror or exc}.") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"The {what} {path} is not a regular file ({_kind(info.st_mode)}); it was refused unread. "
                        "Nothing was changed.")
        if info.st_size > limit:
            raise error(_too_large(what, path, info.st_size, limit))
        chunks: list[bytes] = []
        total = 0
        while True:
            # At most one byte past the bound: a file that grows while it is read is refused too.
            chunk = os.read(fd, min(limit + 1 - total, 16 * 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise error(_too_large(what, path, total, limit))
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"Cannot read the {what} {path}: {exc.strerror or exc}.") from exc
    finally:
        os.close(fd)


def open_append_owned(path: Path, *, what: str, error: type[ReconcilerError], mode: int = 0o600) -> int:
    """A descriptor appending to ``path`` (created with ``mode`` when missing);
    ``error`` when ``path`` is a link.  A device or a named pipe is allowed
    (``--audit-log`` may stream to one): git cannot commit either, so a pull
    request cannot plant one; it can plant a link."""
    if not _NOFOLLOW and is_symlink(path):
        raise error(symlink_refusal(what, path))
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or is_symlink(path):
            raise error(symlink_refusal(what, path)) from exc
        raise error(f"Cannot open the {what} {path}: {exc.strerror or exc}.") from exc


def write_owned(path: Path, data: bytes | Iterable[bytes], *, what: str, error: type[ReconcilerError],
                mode: int = 0o600) -> None:
    """Write ``data`` (bytes, or parts made as they are written) as the whole of ``path``,
    atomically: a temp file beside
    it (``mode``), fsynced, then ``os.replace``d over it and the directory
    fsynced.  A link (or anything but a regular file) at ``path`` is refused;
    one planted between the check and the replace is replaced, not followed."""
    if is_symlink(path):
        raise error(symlink_refusal(what, path))
    if path.exists() and not path.is_file():
        raise error(f"Cannot write the {what} {path}: it exists and is not a regular file. Nothing was written.")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise error(f"Cannot write the {what} {path}: {exc.strerror or exc}. Nothing was written.") from exc
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, mode)
            for part in (data,) if isinstance(data, bytes) else data:
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise error(f"Cannot write the {what} {path}: {exc.strerror or exc}. Nothing was written.") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename survive a power loss; best effort (not every platform opens directories)."""
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


def _too_large(what: str, path: Path, size: int, limit: int) -> str:
    return (f"The {what} {path} is {size:,} bytes or more, over the {size_text(limit)} reconciler reads for it "
            "(many times what it writes for 50,000 workspaces); it was refused unread. A file this size was not "
            "written by reconciler: check where it came from. Nothing was changed.")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"
