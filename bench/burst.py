"""Benchmark: apply-sized bursts against the emulator's rate limits.

Each burst sends N client calls, as fast as the client's own limiter lets
it, to the in-process emulator sharing one VirtualClock with the client.
It reports the 429s met (the target is zero), the least time the documented
limits allow for those calls (``reconciler.plan.cost.least_seconds``, the
figure a plan prints), the virtual time the burst took, their ratio (the
target is at most 1.05), and the wall and CPU time of the run. Run:

    .venv/bin/python bench/burst.py            # 200 calls of each mix
    .venv/bin/python bench/burst.py 500 mixed  # N calls of one mix

Mixes:
    access    PATCH /workspace-users/{id} and POST /workspaces/{id}/access, alternating, with a
              GET /workspaces listing (one page) every 20th call, as apply re-reads (default class)
    creation  POST /workspaces/{id}/connected-workspaces from a template (workspace creation, 30/min)
    files     GET /files/{id} (file retrieval, 60/min)
    mixed     half access writes, 3/10 creations, 1/5 file reads, interleaved

Every call is one request (a listing call reads one page), so N calls are N
requests to the emulator.  The burst starts ``start_offset`` seconds into a
fresh minute of the emulator's fixed windows (0 by default).
``tests/api/test_burst.py`` runs the same bursts and asserts zero 429s and
the exact request counts.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from reconciler.api.bodies import CreateFromTemplate
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.api.models import AccessUserInput
from reconciler.api.ratelimit import classify
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.plan.cost import DEFAULT_LIMITS, least_seconds

TOKEN = "burst-token"
MIXES = ("access", "creation", "files", "mixed")
Call = Callable[[WorkspaceClient], object]


@dataclass(frozen=True)
class BurstResult:
    mix: str
    calls: int                   # requests the emulator received during the burst
    rate_limited: int            # of those, answered 429
    client_calls: int            # requests the client counted (ClientStats.calls)
    client_rate_limited: int     # 429s the client counted (ClientStats.rate_limited)
    by_class: dict[str, int]     # requests answered without 429, per limit class
    least_seconds: float         # what the documented limits allow
    elapsed_seconds: float       # virtual time from the first call to the last answer
    wall_seconds: float
    cpu_seconds: float

    @property
    def ratio(self) -> float:
        """Elapsed over least time; 1.0 is as fast as the limits allow."""
        return self.elapsed_seconds / self.least_seconds if self.least_seconds else 1.0


def seed(n: int) -> dict[str, Any]:
    """One paid, verified company with enough of everything for ``n`` calls of any mix."""
    workspaces: list[dict[str, Any]] = [
        {"id": "ws_group", "name": "Group home", "account": "acc_1", "published": True, "group": "g1",
         "users": [{"email": "owner@acme.com", "role": "owner"}]},
    ]
    workspaces += [
        {"id": f"ws_{i}", "name": f"Client {i}", "published": True,
         "users": [{"email": "owner@acme.com", "role": "owner"}, {"email": f"c{i}@customer.com", "role": "viewer"}]}
        for i in range(n)
    ]
    files = [{"id": f"file_{i}", "fileName": f"f{i}.pdf", "mimeType": "application/pdf", "uploadToken": f"up{i}",
              "uploadStatus": "completed"} for i in range(n)]
    return {"companies": {"acme": {
        "token": TOKEN, "verified": True, "plan": "paid", "credits": n + 1,
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}],
        "templates": [{"id": "tpl_kickoff", "name": "Kickoff", "requiresDeal": False}],
        "workspaces": workspaces, "files": files,
    }}}


LISTING_PROPERTIES = ("workspaceUsers.role", "workspaceUsers.user.email")


def read_listing(client: WorkspaceClient) -> int:
    """Read one page of the workspace listing (one GET /workspaces), as apply
    does before writing; the number of workspaces on it."""
    return sum(1 for _ in islice(client.list_workspaces(properties=LISTING_PROPERTIES), client.page_size))


def _access_calls(client: WorkspaceClient, n: int) -> Iterator[Call]:
    """Alternating role PATCHes and whole-list POSTs over distinct workspaces,
    with a listing every 20th call."""
    user_ids = {ws.id: (ws.workspaceUsers or [])[1].id for ws in client.list_workspaces(
        properties=LISTING_PROPERTIES) if ws.id != "ws_group"}
    for i in range(n):
        wid = f"ws_{i}"
        if i % 20 == 19:
            yield read_listing
        elif i % 2 == 0:
            yield _role_change(user_ids[wid])
        else:
            yield _list_post(wid, [AccessUserInput(email="owner@acme.com", role="owner"),
                                   AccessUserInput(email=f"c{i}@customer.com", role="editor")])


def _role_change(user_id: str) -> Call:
    return lambda client: client.update_workspace_user(user_id, role="commenter")


def _list_post(workspace_id: str, users: list[AccessUserInput]) -> Call:
    return lambda client: client.set_access(workspace_id, users=users)


def _creation(body: CreateFromTemplate) -> Call:
    return lambda client: client.connect_workspace("ws_group", body)


def _file_read(file_id: str) -> Call:
    return lambda client: client.get_file(file_id)


def _creation_calls(n: int) -> Iterator[Call]:
    for i in range(n):
        yield _creation(CreateFromTemplate(templateId="tpl_kickoff", name=f"New {i}"))


def _file_calls(n: int) -> Iterator[Call]:
    for i in range(n):
        yield _file_read(f"file_{i}")


def _interleave(*streams: tuple[int, Iterator[Call]]) -> list[Call]:
    """Merge streams evenly: each call goes at its stream's share of the way through."""
    keyed = [((k + 0.5) / count, s, call) for s, (count, stream) in enumerate(streams)
             for k, call in enumerate(stream)]
    return [call for _, _, call in sorted(keyed, key=lambda t: (t[0], t[1]))]


def plan_calls(mix: str, n: int, setup: WorkspaceClient) -> list[Call]:
    """The ``n`` calls of ``mix``; ``setup`` may read what they need first."""
    if mix == "access":
        return list(_access_calls(setup, n))
    if mix == "creation":
        return list(_creation_calls(n))
    if mix == "files":
        return list(_file_calls(n))
    if mix == "mixed":
        creations, reads = n * 3 // 10, n // 5
        writes = n - creations - reads
        return _interleave((writes, _access_calls(setup, writes)), (creations, _creation_calls(creations)),
                           (reads, _file_calls(reads)))
    raise ValueError(f"mix must be one of {', '.join(MIXES)}, not {mix!r}")


def make_client(emulator: Emulator, clock: VirtualClock, **options: Any) -> WorkspaceClient:
    """A client of the seeded company on ``emulator``, waiting on ``clock``."""
    http = make_http_client("http://emulator.invalid", TOKEN, transport=emulator_transport(emulator))
    return WorkspaceClient(http, clock=clock, **options)


def run_burst(mix: str, n: int = 200, *, start_offset: float = 0.0, **client_options: Any) -> BurstResult:
    """Send the burst and measure it; ``client_options`` go to the client
    (e.g. ``rate_limits`` to see what a misconfigured limit costs)."""
    if not 0 <= start_offset < 60:
        raise ValueError(f"start_offset must be in [0, 60) seconds, not {start_offset!r}")
    clock = VirtualClock()
    emulator = Emulator.from_seed(seed(n), clock=clock)
    calls = plan_calls(mix, n, make_client(emulator, clock))
    # Start in a fresh minute (plus the offset) so the setup reads use none
    # of the burst's quota.
    clock.advance(120 - clock.now() % 60 + start_offset)
    client = make_client(emulator, clock, **client_options)
    first_request = len(emulator.requests)
    started, wall, cpu = clock.now(), time.perf_counter(), time.process_time()
    for call in calls:
        call(client)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sent = emulator.requests[first_request:]
    by_class: Counter[str] = Counter(classify(r.method, r.path.removeprefix("/v1")) for r in sent if r.status != 429)
    return BurstResult(
        mix=mix, calls=len(sent), rate_limited=sum(r.status == 429 for r in sent),
        client_calls=client.stats.calls, client_rate_limited=client.stats.rate_limited, by_class=dict(by_class),
        least_seconds=least_seconds(by_class, DEFAULT_LIMITS), elapsed_seconds=clock.now() - started,
        wall_seconds=wall, cpu_seconds=cpu,
    )


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 200
    mixes = argv[1:] or list(MIXES)
    unknown = [m for m in mixes if m not in MIXES]
    if unknown:
        sys.exit(f"unknown mix(es) {', '.join(unknown)}; the mixes are {', '.join(MIXES)}")
    print("| mix | calls | 429s | least time allowed | virtual elapsed | ratio | wall | CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mix in mixes:
        r = run_burst(mix, n)
        print(f"| {mix} | {r.calls} | {r.rate_limited} | {r.least_seconds:.0f} s | {r.elapsed_seconds:.0f} s "
              f"| {r.ratio:.3f} | {r.wall_seconds:.2f} s | {r.cpu_seconds:.2f} s |")


if __name__ == "__main__":
    main(sys.argv[1:])
