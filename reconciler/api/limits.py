"""Every bound the client puts on what the service may make it do.

The service is not trusted (docs/design.md: "every wait, page count, body and
file read is bounded"): a broken or hostile service must end a command with a
clear error, never hang it, fill the memory, or crash it.  The bounds live
here, in one place, so that they can be documented and reviewed together.

    MAX_WAIT_SECONDS       the longest single wait the service can ask for
    MAX_RESET_AHEAD_SECONDS  how far ahead an X-RateLimit-Reset can be believed
    MAX_BODY_BYTES         the largest answer read
    MAX_LISTED_ITEMS       the most items one listing follows pages for

The whole-answer deadline is not a constant: it is ``--timeout`` (see
``deadline.py``).
"""

from __future__ import annotations

import math

# 15 minutes.  The documented limits are per minute, so a well-behaved
# service never asks for more than about a minute (a reset an hour ahead would
# only come from an hourly window, which the description mentions but does
# not document).  A wait longer than this is not slept at all: the command
# stops at once with an error naming the header, its value, the call and this
# cap.  A CI job then fails in seconds rather than sitting for years (a
# ``Retry-After: 1000000000`` is 31 years), and a person can simply run it
# again later.
MAX_WAIT_SECONDS = 15 * 60.0

# The longest window the description mentions is an hour (plus a minute for
# the two clocks disagreeing): an ``X-RateLimit-Reset`` further ahead than
# that cannot be a reset time of this service, and is taken for a misreading
# (epoch milliseconds, say) and ignored, as if the header were absent.  A
# reset within that hour but further ahead than MAX_WAIT_SECONDS is believed,
# and so is an error rather than a wait.
WINDOW_SECONDS = 60.0
MAX_RESET_AHEAD_SECONDS = 3600.0 + WINDOW_SECONDS

# 64 MiB.  The largest answer reconciler asks for is a page of workspaces:
# with 100 workspaces (the default --page-size) of 25 access entries each it
# is about 1 MiB of JSON, and about 10 MiB at the largest --page-size (1000).
# An answer bigger than this is read no further (it is read in pieces, never
# whole) and ends the command with an error, so that an endless or enormous
# body cannot exhaust the memory.
MAX_BODY_BYTES = 64 * 1024 * 1024

# One million.  A listing follows pageInfo.hasNextPage; when the service
# announces pageInfo.total or pageInfo.pages, those bound it, and this bounds
# it when it announces neither (or absurd ones).  The largest company
# measured (README, "Speed and cost") has 50,000 workspaces; a million is
# twenty times that, and about two hours of pages at the default rate limit.
MAX_LISTED_ITEMS = 1_000_000


def describe_seconds(seconds: float) -> str:
    """``seconds`` for a message: ``900 s (15 minutes)``, ``12 s``."""
    if not math.isfinite(seconds):
        return "forever"
    for unit, size in (("years", 365.25 * 86400), ("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            shown = f"{seconds:.0f}" if seconds < 1e12 else f"{seconds:.3g}"
            count = seconds / size
            if count >= 1e6:
                return f"{shown} s ({count:.3g} {unit})"
            if count >= 100:
                return f"{shown} s ({count:,.0f} {unit})"
            number = f"{count:.3g}"
            return f"{shown} s ({number} {unit[:-1] if number == '1' else unit})"
    return f"{seconds:g} s"


def describe_wait(seconds: float) -> str:
    """A wait for a message: ``a wait of 3600 s (1 hour)``, ``an endless wait``."""
    return f"a wait of {describe_seconds(seconds)}" if math.isfinite(seconds) else "an endless wait"


def describe_bytes(size: int) -> str:
    """``size`` for a message: ``64 MiB``, ``1.5 GiB``, ``812 bytes``."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
