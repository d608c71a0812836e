"""``page`` / ``limit`` parsing and ``pageInfo``.

Both parameters are strings on the wire; anything but a positive integer
(and, for ``limit``, at most ``MAX_LIMIT``) is a 400 naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from reconciler.emulator.errors import bad_request

DEFAULT_LIMIT = 100
# The description gives no maximum; 1000 is the emulator's choice (README.md).
MAX_LIMIT = 1000

T = TypeVar("T")


@dataclass(frozen=True)
class PageRequest:
    page: int = 1
    limit: int = DEFAULT_LIMIT


def parse(query: Sequence[tuple[str, str]], *, default_limit: int = DEFAULT_LIMIT) -> PageRequest:
    """The requested page (1-based) and page size."""
    values = {k: v for k, v in query if k in ("page", "limit")}
    page = _positive(values.get("page"), "page", 1)
    limit = _positive(values.get("limit"), "limit", default_limit)
    if limit > MAX_LIMIT:
        raise bad_request(f"limit must be at most {MAX_LIMIT}, not {limit}.")
    return PageRequest(page, limit)


def _positive(raw: str | None, name: str, default: int) -> int:
    if raw is None:
        return default
    text = raw.strip()
    # isdigit() alone also passes non-ASCII digits ("²", "١"), which int()
    # refuses or reads differently.
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise bad_request(f"{name} must be a positive integer, not {raw!r}.")
    return int(text)


def paginate(items: Sequence[T], request: PageRequest) -> tuple[list[T], dict[str, Any]]:
    """The items of the requested page and the ``pageInfo`` describing it.

    ``pages`` is 0 for an empty list; a page past the end is empty, not an
    error, and still says ``hasPrevPage``.
    """
    total = len(items)
    pages = math.ceil(total / request.limit)
    start = (request.page - 1) * request.limit
    chunk = list(items[start:start + request.limit])
    info = {
        "page": request.page,
        "pages": pages,
        "total": total,
        "pageTotal": len(chunk),
        "hasNextPage": request.page < pages,
        "hasPrevPage": request.page > 1,
    }
    return chunk, info
