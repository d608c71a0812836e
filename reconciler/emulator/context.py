"""What a route handler gets (``RequestContext``) and gives back.

A handler receives the authenticated company and the parsed request, and
returns ``(status, payload)`` for a JSON answer or an ``EmulatorResponse``
for anything else.  It calls ``ctx.changed()`` when it modified the store,
which is what makes the core persist the data file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.emulator import pagination, properties
from reconciler.emulator.errors import bad_request
from reconciler.clock import Clock
from reconciler.emulator.records import EmbedGrant, Notification
from reconciler.emulator.store import Company, Store, iso


class Shared(Protocol):
    """What a route may read or change beyond the authenticated company: the
    clock, the store (other companies, for an embed grant's or an upload's
    owner; the id source), the notifications and embed grants, and how long a
    conversion takes.  ``Emulator`` is one; the routes need no more of it
    (nor to import it: the core imports the routes)."""

    @property
    def clock(self) -> Clock: ...

    @property
    def store(self) -> Store: ...

    @property
    def notifications(self) -> list[Notification]: ...

    @property
    def embed_grants(self) -> dict[str, EmbedGrant]: ...

    @property
    def conversion_seconds(self) -> float: ...


@dataclass
class EmulatorResponse:
    """An HTTP answer: status, headers and the raw body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


Reply = tuple[int, Any] | EmulatorResponse
Handler = Callable[..., Reply]

# Query keys every endpoint tolerates: ``properties`` is checked per endpoint
# by ``ctx.properties`` (which refuses it where no values are allowed).
_PROPERTY_KEYS = frozenset(properties.PARAM_NAMES)


@dataclass
class RequestContext:
    shared: Shared
    company: Company | None
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: Mapping[str, str]
    body: bytes
    base_url: str
    modified: bool = False
    _json: Any = None

    # -- time and ids -----------------------------------------------------
    def now(self) -> float:
        return self.shared.clock.now()

    def now_iso(self) -> str:
        return iso(self.shared.clock.now())

    def new_id(self, prefix: str) -> str:
        return self.shared.store.ids.new(prefix)

    def changed(self) -> None:
        """The store was modified: persist after this request."""
        self.modified = True

    @property
    def co(self) -> Company:
        """The authenticated company (every ``/v1`` route has one)."""
        assert self.company is not None
        return self.company

    # -- request parsing ----------------------------------------------------
    def json_body(self, *, required: bool = True) -> dict[str, Any]:
        """The body as a JSON object; 400 when it is not one (an empty body
        reads as ``{}`` when not ``required``)."""
        if self._json is None:
            if not self.body.strip():
                if required:
                    raise bad_request("A JSON request body is required.")
                self._json = {}
            else:
                try:
                    self._json = json.loads(self.body)
                except (ValueError, UnicodeDecodeError):
                    raise bad_request("The request body is not valid JSON.") from None
            if not isinstance(self._json, dict):
                raise bad_request("The request body must be a JSON object.")
        return self._json

    def check_query(self, allowed: Collection[str] = ()) -> None:
        """400 for a query key the endpoint does not take (besides
        ``properties``, and ``filter[...]`` keys named in ``allowed``)."""
        for key, _ in self.query:
            if key not in allowed and key not in _PROPERTY_KEYS:
                raise bad_request(f"Unknown query parameter {key!r}.")

    def properties(self, allowed: Sequence[str]) -> list[str]:
        return properties.parse(self.query, allowed)

    def page(self) -> pagination.PageRequest:
        return pagination.parse(self.query)

    def filters(self, allowed: Collection[str]) -> dict[str, str]:
        """``filter[name]=value`` pairs; 400 for a name not in ``allowed``."""
        out: dict[str, str] = {}
        for key, value in self.query:
            if key.startswith("filter[") and key.endswith("]"):
                name = key[len("filter["):-1]
                if name not in allowed:
                    raise bad_request(f"Unknown filter {name!r}; allowed: {', '.join(sorted(allowed))}.")
                out[name] = value
            elif key == "filter":
                raise bad_request("filter is an object: send filter[<name>]=<value>.")
        return out

    def filter_keys(self, names: Collection[str]) -> list[str]:
        return [f"filter[{n}]" for n in names]
