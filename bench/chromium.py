"""Open a page in headless Chromium (Debian's ``chromium``) and read it back.

Used by the report's browser test and its benchmark: one process per call,
a fresh profile, no network features, the DOM dumped after the page's
scripts ran and, optionally, a screenshot.  ``.ci/ensure-chromium``
installs the browser.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic")
# Chromium's first start on a loaded 2-core machine can take tens of seconds.
TIMEOUT_SECONDS = 120.0


class ChromiumMissing(RuntimeError):
    """/usr/bin/chromium is not installed."""


def open_page(page: Path, *, fragment: str = "", screenshot: Path | None = None,
              window: tuple[int, int] = (1280, 2000), timeout: float = TIMEOUT_SECONDS) -> str:
    """The DOM of ``page`` (a local file, with ``#fragment`` when given) after its scripts ran; with
    ``screenshot``, a PNG of the window there too.  ``subprocess.TimeoutExpired`` after ``timeout``
    seconds."""
    if not CHROMIUM.exists():
        raise ChromiumMissing(f"{CHROMIUM} is missing: run .ci/ensure-chromium (or make test, which runs it).")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        argv = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", f"--window-size={window[0]},{window[1]}",
                "--dump-dom"]
        if screenshot is not None:
            argv.append(f"--screenshot={screenshot}")
        argv.append(page.resolve().as_uri() + (f"#{fragment}" if fragment else ""))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout
