"""Fixtures of the directory's tests: a state address on each backend, a fixed clock, SCIM users and groups."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reconciler.directory.store import DirectoryStore, open_directory_store

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


class FixedClock:
    """A clock that stays where a test puts it: the days a store records are exact."""

    def __init__(self, now: datetime = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)) -> None:
        self.at = now

    def __call__(self) -> datetime:
        return self.at

    def set_day(self, day: str) -> None:
        self.at = datetime.fromisoformat(f"{day}T09:30:00+00:00")


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture(params=["file", "postgresql"])
def state_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh state address on each backend: a state file's path, or a PostgreSQL key of its own."""
    if request.param == "file":
        return str(tmp_path / "reconciler.state.json")
    return str(request.getfixturevalue("pg_state"))


@pytest.fixture
def store(state_address: str, clock: FixedClock) -> Iterator[DirectoryStore]:
    with open_directory_store(state_address, now=clock) as opened:
        yield opened


def scim_user(user_id: str, email: str, *, active: bool = True, manager: str | None = None) -> dict[str, Any]:
    user: dict[str, Any] = {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": user_id,
                            "userName": email, "active": active}
    if manager is not None:
        user["schemas"].append(ENTERPRISE)
        user[ENTERPRISE] = {"manager": {"value": manager}}
    return user


def scim_group(group_id: str, name: str, *member_ids: str) -> dict[str, Any]:
    return {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "id": group_id, "displayName": name,
            "members": [{"value": m} for m in member_ids]}


TOKEN = "scim-tok-5be1c0d2-never-printed"


class Served:
    """``directory_app`` over real HTTP on 127.0.0.1: its base URL, a client with the token, its store."""

    def __init__(self, base_url: str, store: DirectoryStore) -> None:
        import httpx

        self.base_url = base_url
        self.store = store
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)


@pytest.fixture
def served(store: DirectoryStore) -> Iterator[Served]:
    from reconciler.directory.server import directory_app
    from reconciler.directory.server import background_server

    url, stop = background_server(directory_app(store, TOKEN, max_body_bytes=64 * 1024))
    server = Served(f"{url}/scim/v2", store)
    try:
        yield server
    finally:
        server.http.close()
        stop()
