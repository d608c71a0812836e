"""Fixtures for the client's unit tests: a respx router as the transport.

The router is handed to the client as an ``httpx.MockTransport`` (nothing is
patched), and the client waits on a ``VirtualClock``, so no test sleeps.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.clock import VirtualClock

BASE = "https://api.example.test/v1"
TOKEN = "tok-SECRET-5f2a9c1e77"

MakeClient = Callable[..., WorkspaceClient]


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


@pytest.fixture
def make_client(router: respx.Router, clock: VirtualClock) -> MakeClient:
    def make(**kwargs: Any) -> WorkspaceClient:
        http = make_http_client(BASE, TOKEN, transport=httpx.MockTransport(router.handler))
        kwargs.setdefault("rng", random.Random(7))
        return WorkspaceClient(http, clock=clock, **kwargs)

    return make


@pytest.fixture
def client(make_client: MakeClient) -> WorkspaceClient:
    return make_client()


def data(name: str, value: Any) -> dict[str, Any]:
    """A success body ``{data: {name: value}}``."""
    return {"data": {name: value}}


def error(code: str, message: str) -> dict[str, Any]:
    """An error body in the documented envelope."""
    return {"error": {"code": code, "message": message}}


def page(name: str, items: list[dict[str, Any]], number: int, pages: int) -> dict[str, Any]:
    """One page of a list answer with its pageInfo."""
    return {
        "data": {
            name: items,
            "pageInfo": {"page": number, "pages": pages, "total": None, "pageTotal": len(items),
                         "hasNextPage": number < pages, "hasPrevPage": number > 1},
        }
    }


# The statuses of the description's Errors table, with their codes and the
# exception each becomes.
DOCUMENTED_ERRORS: list[tuple[int, str, type[errors.ApiError]]] = [
    (400, "BAD_REQUEST", errors.BadRequest),
    (401, "UNAUTHORIZED", errors.Unauthorized),
    (403, "FORBIDDEN", errors.Forbidden),
    (404, "NOT_FOUND", errors.NotFound),
    (409, "CONFLICT", errors.Conflict),
    (429, "RATE_LIMIT_EXCEEDED", errors.RateLimited),
    (500, "INTERNAL_SERVER_ERROR", errors.ServerError),
]
