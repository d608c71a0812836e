"""Waiting in tests for something that can be observed, never for time.

A test that starts a process, kills one or races a lock waits for an event it can see (a row, a
file, a line on a pipe, a request on the emulator) with a generous deadline; past it, the test
fails with an AssertionError that says what it saw (the child's exit code and output so far),
not with a hang or a bare timeout.  These are the only copies of those waits: every test uses them.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

# Seconds: reached only when something is wrong, so set for the slowest machine a test meets, not a
# typical one: on 2 CPUs at a load average near 20 (a mutation run, three loops of the PostgreSQL
# crash tests and other suites at once), a child apply took more than 30 s to take its lock.
DEADLINE = 120.0

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], *, deadline: float = DEADLINE, what: Callable[[], str],
               every: float = 0.01) -> T:
    """The first truthy value of ``predicate()``, asked every ``every`` s; after ``deadline`` s, an
    AssertionError ending in ``what()``: what was observed instead."""
    end = time.monotonic() + deadline
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"not within {deadline:g} s: {what()}")
        time.sleep(every)


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def said(process: subprocess.Popen[Any], *logs: Path, seen: str = "") -> str:
    """What ``process`` has shown, for a failure message: its exit code, or that it was still running
    (then it is killed, so that its output can be read), and its output so far: what the test
    already read from it (``seen``), the pipes' rest, and the files it writes to (``logs``)."""
    running = False
    out: str | bytes | None = None
    err: str | bytes | None = None
    try:
        try:
            out, err = process.communicate(timeout=2)  # one that is exiting is let finish: its code is known
        except subprocess.TimeoutExpired:
            running = True
            process.kill()
            out, err = process.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError, OSError):  # pipes already read or closed by the test
        pass
    state = "still running (killed now)" if running else f"exit code {process.returncode}"
    parts = [f"pid {process.pid}, {state}"]
    for name, text in (("read so far", seen), ("stdout", _text(out)), ("stderr", _text(err))):
        if text:
            parts.append(f"{name}:\n{text.rstrip()}")
    for log in logs:
        parts.append(f"{log.name}:\n{log.read_text(encoding='utf-8', errors='replace').rstrip()}"
                     if log.exists() else f"{log.name}: absent")
    return "\n".join(parts)


def wait_for_exit(process: subprocess.Popen[Any], *logs: Path, deadline: float = 120.0) -> int:
    """``process``'s exit code; after ``deadline`` s it is killed and the test fails with its output."""
    try:
        return process.wait(timeout=deadline)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {deadline:g} s: {said(process, *logs)}") from None


def read_line(process: subprocess.Popen[Any], *, deadline: float = DEADLINE) -> str:
    """The next line ``process`` writes on its stdout pipe; fails, with what the process said, when
    it closes its stdout first or writes no line within ``deadline`` s (it is killed then)."""
    stream = process.stdout
    assert stream is not None, "read_line needs stdout=subprocess.PIPE"
    lines: queue.Queue[str | bytes] = queue.Queue()
    # A thread, as a buffered pipe cannot be read with a timeout; it ends with the line or the pipe.
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=deadline)
    except queue.Empty:
        raise AssertionError(f"no line on stdout within {deadline:g} s: {said(process)}") from None
    if not line:
        raise AssertionError(f"stdout closed before a whole line: {said(process)}")
    return _text(line)
