"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
enough to open a local page, run script in it as a person's clicks would, and catch a download.

The protocol on the pipe is JSON messages ended by a NUL byte: Chromium reads commands on its fd 3
and writes answers and events on its fd 4.  No websocket, no port, no network.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.chromium import CHROMIUM, FLAGS, TIMEOUT_SECONDS
from tests.waiting import wait_until


class DevTools:
    def __init__(self, download_dir: Path) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-profile-")
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()

        def onto_3_and_4() -> None:  # in the child, before exec: Chromium's protocol fds
            os.dup2(commands_read, 3)
            os.dup2(answers_write, 4)

        self._process = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={self._profile.name}", "--remote-debugging-pipe",
             # 3 and 4 are kept open too: the child's copies made by onto_3_and_4 before the fds are closed.
             "about:blank"], pass_fds=(commands_read, answers_write, 3, 4),
            preexec_fn=onto_3_and_4, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(download_dir), eventsEnabled=True)
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while True:
            answer = self._read(deadline, method)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def _read(self, deadline: float, method: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            # Waited for with the time left, never blocked on: a hung Chromium fails the test, saying so.
            ready, _, _ = select.select([self._answers], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                state = "running" if self._process.poll() is None else f"exited with {self._process.returncode}"
                raise AssertionError(f"Chromium ({state}) did not answer {method} within {TIMEOUT_SECONDS:g} s; "
                                     f"read so far: {self._buffer[-500:]!r}")
            chunk = os.read(self._answers, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"the page threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, page: Path | str) -> None:
        """Load ``page`` (a file, or a URL) and wait for its own document."""
        url = page if isinstance(page, str) else page.resolve().as_uri()
        self.call("Page.navigate", self.session, url=url)
        # The page's own document, loaded: the one before it (about:blank) is "complete" too.
        wait_until(lambda: self.loaded(f"location.href === {json.dumps(url)}"), deadline=TIMEOUT_SECONDS,
                   every=0.05, what=lambda: f"{page} did not load: document.readyState is "
                                            f"{self.evaluate('document.readyState')!r}")

    def loaded(self, condition: str) -> bool:
        """Whether the document is loaded and ``condition`` holds in it; False while a navigation replaces it."""
        try:
            return bool(self.evaluate(f"document.readyState === 'complete' && ({condition})"))
        except RuntimeError:  # the document went away while asked
            return False

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError, AssertionError):  # closing anyway: no answer is needed
            pass
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._answers)
        self._profile.cleanup()


def wait_for_file(path: Path, timeout: float = TIMEOUT_SECONDS) -> bytes:
    """The bytes of ``path`` once a download has written it whole."""
    wait_until(lambda: path.exists() and not list(path.parent.glob("*.crdownload")), deadline=timeout, every=0.05,
               what=lambda: f"no whole download at {path}; the directory holds "
                            f"{sorted(p.name for p in path.parent.iterdir()) if path.parent.exists() else 'nothing'}")
    return path.read_bytes()
