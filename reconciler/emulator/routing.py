"""Route table entries and matching.

A route module exposes ``ROUTES``; the core matches method and path against
the union.  A path that matches some route but not the method is a 405,
whose ``Allow`` header lists the methods that path takes (RFC 9110, 15.5.6).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from reconciler.emulator.context import Handler

DEFAULT = "default"
WORKSPACE_CREATION = "workspace_creation"
FILE_RETRIEVAL = "file_retrieval"


@dataclass(frozen=True)
class Route:
    method: str
    template: str                 # e.g. "/v1/workspaces/{id}/access"
    handler: Handler
    limit_class: str = DEFAULT
    authenticated: bool = True    # False for the presigned upload and embed addresses
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.template)
        object.__setattr__(self, "pattern", re.compile(f"^{regex}/?$"))


def match(routes: Sequence[Route], method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
    """(route, path parameters, path known): the route is None when nothing
    matches; ``path known`` tells a 405 from a 404."""
    known = False
    for route in routes:
        m = route.pattern.match(path)
        if m is None:
            continue
        known = True
        if route.method == method.upper():
            return route, m.groupdict(), True
    return None, {}, known


def allowed_methods(routes: Sequence[Route], path: str) -> list[str]:
    """The methods some route takes at ``path``, sorted (for ``Allow``)."""
    return sorted({route.method for route in routes if route.pattern.match(path)})
