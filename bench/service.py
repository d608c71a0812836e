"""The in-process emulator and a client sharing one virtual clock, with a
transport that times the emulator's share and can keep the page bodies.

The emulator runs in the benchmark's process, so its work (routing,
rendering and JSON-encoding every page) lands in the plan's wall and CPU
time. ``MeteredTransport`` adds up the time spent inside it, so the tool's
own cost can be told apart; with ``keep_bodies`` it also keeps the bodies of
the listing pages, for the JSON-decoding floor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport

from bench.scenario import TOKEN

BASE_URL = "http://emulator.invalid"
# A minute and more between runs on one emulator: its rate-limit window is
# empty again when the next client (with a fresh limiter) starts.
QUIET_GAP_SECONDS = 120.0


@dataclass
class MeteredTransport(httpx.BaseTransport):
    """Forwards to ``inner``; counts the wall and CPU seconds spent there."""

    inner: httpx.BaseTransport
    keep_bodies: bool = False
    wall: float = 0.0
    cpu: float = 0.0
    bodies: list[bytes] = field(default_factory=list)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        wall, cpu = time.perf_counter(), time.process_time()
        response = self.inner.handle_request(request)
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        if self.keep_bodies and request.method == "GET" and request.url.path == "/v1/workspaces":
            self.bodies.append(response.content)
        return response


@dataclass
class Session:
    """One client against the shared emulator, with its own limiter and stats."""

    client: WorkspaceClient
    clock: VirtualClock
    transport: MeteredTransport
    started: float  # virtual time when the session began

    def virtual_elapsed(self) -> float:
        return self.clock.now() - self.started


def make_emulator(seed: dict[str, object]) -> tuple[Emulator, VirtualClock]:
    clock = VirtualClock()
    return Emulator.from_seed(seed, clock=clock), clock


def open_session(emulator: Emulator, clock: VirtualClock, *, keep_bodies: bool = False) -> Session:
    """A fresh client on ``emulator``, after a quiet gap on the shared clock."""
    clock.advance(QUIET_GAP_SECONDS)
    transport = MeteredTransport(emulator_transport(emulator), keep_bodies=keep_bodies)
    client = WorkspaceClient(make_http_client(BASE_URL, TOKEN, transport=transport), clock=clock)
    return Session(client=client, clock=clock, transport=transport, started=clock.now())
