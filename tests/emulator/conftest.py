"""Fixtures: an emulator on a virtual clock and raw httpx clients to it.

The tests speak raw HTTP (``httpx.Client``), never the project's client, so
they check the emulator against the service description on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport

SEED = Path(__file__).with_name("two_companies.yaml")
BASE = "http://emulator.test/v1"


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def seed_path() -> Path:
    """The two-company seed beside these tests."""
    return SEED


@pytest.fixture
def make_emulator(clock: VirtualClock) -> Callable[..., Emulator]:
    """Builds an emulator from the two-company seed on the shared clock."""
    def make(**options: object) -> Emulator:
        return Emulator.from_seed_file(SEED, clock=clock, **options)  # type: ignore[arg-type]
    return make


@pytest.fixture
def emulator(make_emulator: Callable[..., Emulator]) -> Emulator:
    return make_emulator()


ClientFactory = Callable[..., httpx.Client]


@pytest.fixture
def make_client(emulator: Emulator) -> Iterator[ClientFactory]:
    clients: list[httpx.Client] = []

    def make(token: str | None = "token-acme", *, target: Emulator | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        client = httpx.Client(transport=emulator_transport(target or emulator), base_url=BASE, headers=headers)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: ClientFactory) -> httpx.Client:
    return make_client()


def _props(*values: str) -> list[tuple[str, str]]:
    return [("properties[]", v) for v in values]


@pytest.fixture
def props() -> Callable[..., list[tuple[str, str]]]:
    """Builds a ``properties[]`` query, as the description encodes arrays."""
    return _props
