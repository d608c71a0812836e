"""A hostile or broken service never hangs or crashes the client.

Each test is one attack: a small stdlib HTTP server on 127.0.0.1 (a free
port) answers ``GET /v1/workspaces`` the hostile way, and the real CLI,
``reconciler plan`` in a subprocess with RECONCILER_BASE_URL pointing at it,
must end with exit 1, a one-paragraph message naming what it refused (the
header and its value, the endpoint, the cap) and no traceback, within a
generous hard cap (the subprocess timeout).  The caps themselves are in
``reconciler/api/limits.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import QUICKSTART

TOKEN = "hostile-test-token-8d41c2"
HARD_CAP = 60.0  # seconds any of these commands may take before the test fails

Handler = Callable[["_Handler", int], None]


@dataclass
class HostileService:
    """The server's state: how to answer, and what it was asked."""

    base_url: str = ""
    answer: Handler | None = None
    requests: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, line: str) -> int:
        with self.lock:
            self.requests.append(line)
            return len(self.requests)


class _Handler(BaseHTTPRequestHandler):
    service: HostileService  # set on the subclass made per server

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        number = self.service.record(f"GET {self.path}")
        assert self.service.answer is not None
        try:
            self.service.answer(self, number)
        except OSError:  # the client gave up and closed the connection: what the attack wants
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep the test output clean
        return

    # What the answers below are made of.
    def send_json(self, status: int, doc: object, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile() -> Iterator[HostileService]:
    service = HostileService()
    handler = type("Handler", (_Handler,), {"service": service})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    service.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        service.stopping.set()  # ends any trickle still going
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """The quickstart manifest, alone in a fresh directory (its state beside it)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(QUICKSTART / "manifest.yaml", project / "manifest.yaml")
    return project


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run_plan(service: HostileService, project: Path, *extra: str, cap: float = HARD_CAP) -> Outcome:
    """``reconciler plan PROJECT`` against ``service``, in a subprocess
    killed (and the test failed) after ``cap`` seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
    env.update(RECONCILER_BASE_URL=service.base_url, RECONCILER_TOKEN=TOKEN)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "reconciler", "plan", str(project), *extra], env=env,
                              cwd=project, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired as exc:  # killed at the cap: the failure says what it had printed
        raise AssertionError(f"reconciler plan still ran after {cap:g} s (killed); stdout so far: {exc.stdout!r}; "
                             f"stderr so far: {exc.stderr!r}") from None
    return Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def assert_refused(outcome: Outcome, *named: str) -> None:
    """Exit 1, every ``named`` text in the message, no traceback, no token."""
    assert outcome.code == 1, outcome.stderr
    for text in named:
        assert text in outcome.stderr, f"{text!r} not in: {outcome.stderr}"
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert "Internal error" not in outcome.stderr
    assert TOKEN not in outcome.stderr + outcome.stdout


def workspace(workspace_id: str) -> dict[str, Any]:
    return {"id": workspace_id, "name": workspace_id, "workspaceUsers": [], "workspaceDomains": []}


def page(items: list[dict[str, Any]], **page_info: Any) -> dict[str, Any]:
    return {"data": {"workspaces": items, "pageInfo": page_info}}


def rate_limited(retry_after: str) -> Handler:
    def answer(handler: _Handler, _number: int) -> None:
        handler.send_json(429, {"error": {"code": "RATE_LIMITED", "message": "slow down"}},
                          {"Retry-After": retry_after})

    return answer


# --- the harness itself: an honest answer plans normally ----------------------------------------


def test_an_honest_answer_from_the_test_server_plans_normally(hostile: HostileService, manifests: Path) -> None:
    hostile.answer = lambda h, _n: h.send_json(200, page([workspace("ws_home"), workspace("ws_portal")],
                                                          page=1, pages=1, total=2, hasNextPage=False))
    outcome = run_plan(hostile, manifests)
    assert outcome.code == 0, outcome.stderr
    assert hostile.requests[0].startswith("GET /v1/workspaces?")


# --- waits ---------------------------------------------------------------------------------------


def test_a_retry_after_of_a_billion_seconds_is_refused_without_waiting(hostile: HostileService,
                                                                        manifests: Path) -> None:
    hostile.answer = rate_limited("1000000000")
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "Retry-After: 1000000000", "GET /workspaces", "900 s (15 minutes)")
    assert len(hostile.requests) == 1


def test_a_retry_after_of_1e999_is_refused_not_a_crash(hostile: HostileService, manifests: Path) -> None:
    hostile.answer = rate_limited("1e999")
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "Retry-After: 1e999", "GET /workspaces", "an endless wait", "900 s (15 minutes)")
    assert len(hostile.requests) == 1


def test_a_retry_after_date_in_the_year_9999_is_refused_not_a_crash(hostile: HostileService,
                                                                     manifests: Path) -> None:
    hostile.answer = rate_limited("Fri, 31 Dec 9999 23:59:59 GMT")
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "Retry-After: Fri, 31 Dec 9999 23:59:59 GMT", "GET /workspaces", "900 s (15 minutes)")
    assert len(hostile.requests) == 1


def test_a_rate_limit_reset_an_hour_ahead_is_refused_before_the_next_call(hostile: HostileService,
                                                                           manifests: Path) -> None:
    def answer(handler: _Handler, _number: int) -> None:
        # A first page that leaves more to list, and says no call may be made for an hour.
        handler.send_json(200, page([workspace("ws_home")], page=1, pages=2, total=2, hasNextPage=True),
                          {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 3600)})

    hostile.answer = answer
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "X-RateLimit-Remaining: 0", "X-RateLimit-Reset:", "GET /workspaces",
                   "900 s (15 minutes)")
    assert len(hostile.requests) == 1  # the second page was never asked for


# --- pages ---------------------------------------------------------------------------------------


def test_has_next_page_forever_stops_at_the_announced_page_count(hostile: HostileService, manifests: Path) -> None:
    hostile.answer = lambda h, n: h.send_json(200, page([workspace(f"ws_{n}")], page=n, pages=3, total=300,
                                                        hasNextPage=True))
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "hasNextPage", "announced 3 pages in all")
    assert len(hostile.requests) == 3


def test_has_next_page_forever_without_a_page_count_stops_at_the_total(hostile: HostileService,
                                                                        manifests: Path) -> None:
    hostile.answer = lambda h, n: h.send_json(200, page([workspace(f"ws_{n}")], page=n, total=5, hasNextPage=True))
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "pageInfo.total", "more than the 5")
    assert len(hostile.requests) == 6


def test_a_page_repeating_ids_already_listed_is_refused(hostile: HostileService, manifests: Path) -> None:
    # A service that ignores ?page= sends the first page again and again.
    hostile.answer = lambda h, _n: h.send_json(200, page([workspace("ws_other")], hasNextPage=True))
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "page 2 repeats the id 'ws_other'")
    assert len(hostile.requests) == 2


def test_more_items_than_the_announced_total_are_refused(hostile: HostileService, manifests: Path) -> None:
    hostile.answer = lambda h, _n: h.send_json(200, page([workspace("ws_a"), workspace("ws_b"), workspace("ws_c")],
                                                          page=1, pages=1, total=1, hasNextPage=False))
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "3", "more than the 1 the first page announced in pageInfo.total")


# --- time and size -------------------------------------------------------------------------------


def _trickle(handler: _Handler, data: bytes, every: float) -> None:
    for byte in data:
        if handler.service.stopping.wait(every):
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()


def test_a_body_trickling_one_byte_every_2_s_ends_within_the_timeout(hostile: HostileService,
                                                                     manifests: Path) -> None:
    def answer(handler: _Handler, _number: int) -> None:
        body = json.dumps(page([workspace("ws_home")], hasNextPage=False)).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.flush()
        _trickle(handler, body, 2.0)

    hostile.answer = answer
    outcome = run_plan(hostile, manifests, "--timeout", "5", cap=20)
    assert_refused(outcome, "GET /workspaces", "not complete in time", "5 s", "--timeout")
    assert len(hostile.requests) == 1  # a trickle is not sent again


def test_one_trickled_answer_is_held_no_longer_than_the_timeout(hostile: HostileService, manifests: Path) -> None:
    """Timed by the service, for the one answer alone (not the command's start-up): from its first byte to
    the moment it finds the client gone. A byte every 0.25 s finds that within half a second of the close,
    so the bound is --timeout plus that; an answer held twice --timeout (10 s) is far outside it."""
    held: list[float] = []
    found_gone = threading.Event()  # the handler runs on the server's thread: wait for its finding

    def answer(handler: _Handler, _number: int) -> None:
        body = json.dumps(page([workspace("ws_home")], hasNextPage=False)).encode() * 100
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.flush()
        started = time.monotonic()
        try:
            _trickle(handler, body, 0.25)
        finally:
            held.append(time.monotonic() - started)
            found_gone.set()

    hostile.answer = answer
    outcome = run_plan(hostile, manifests, "--timeout", "5", cap=30)
    assert_refused(outcome, "GET /workspaces", "not complete in time", "5 s", "--timeout")
    assert found_gone.wait(10), f"the service did not find the client gone within 10 s of its exit ({outcome})"
    assert len(held) == 1 and held[0] < 5 + 1.5, held


def test_a_status_line_trickling_one_byte_every_2_s_ends_within_the_timeout(hostile: HostileService,
                                                                            manifests: Path) -> None:
    def answer(handler: _Handler, _number: int) -> None:
        _trickle(handler, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Padding: a\r\n" * 1000,
                 2.0)

    hostile.answer = answer
    outcome = run_plan(hostile, manifests, "--timeout", "5", cap=20)
    assert_refused(outcome, "GET /workspaces", "not complete in time", "--timeout")
    assert outcome.seconds < 12


_MEBIBYTE = b"[" * 1024 * 1024  # sent again and again: the test never holds more than this


def test_an_endless_chunked_body_is_read_no_further_than_the_cap(hostile: HostileService, manifests: Path) -> None:
    def answer(handler: _Handler, _number: int) -> None:
        handler.protocol_version = "HTTP/1.1"
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        while not handler.service.stopping.is_set():
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(_MEBIBYTE), _MEBIBYTE))

    hostile.answer = answer
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "too large", "64 MiB")
    assert len(hostile.requests) == 1


def test_a_body_announced_at_1_5_gb_is_refused_before_it_is_read(hostile: HostileService, manifests: Path) -> None:
    def answer(handler: _Handler, _number: int) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(1_500_000_000))
        handler.end_headers()
        while not handler.service.stopping.is_set():
            handler.wfile.write(_MEBIBYTE)

    hostile.answer = answer
    outcome = run_plan(hostile, manifests)
    assert_refused(outcome, "GET /workspaces", "Content-Length: 1500000000", "64 MiB", "none of it was read")
    assert len(hostile.requests) == 1
