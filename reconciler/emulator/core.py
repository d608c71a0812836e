"""The emulator's request handler: auth, routing, rate limits, faults,
persistence, around the route handlers.

``Emulator.handle`` is framework-free (method, path, query, headers, body in;
status, headers, body out), so the in-process httpx transport and the
Starlette server share it unchanged.  Order of checks for a ``/v1`` path:
bearer token (401), route (404/405), rate limit (429), injected fault, then
the handler; every answer to an authenticated request carries the
``X-RateLimit-*`` headers of the route's limit class.

With a data file, memory and file stay in step: a change whose write fails
is undone in memory (read back from the file, which the atomic replace left
whole) and answered 500 with the error envelope.
"""

from __future__ import annotations

import io
import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from reconciler.clock import Clock, SystemClock
from reconciler.gcpause import gc_paused
from reconciler.emulator import (
    routes_access, routes_assets, routes_connect, routes_directory, routes_embed, routes_files, routes_plan,
    routes_workspaces,
)
from reconciler.emulator.context import EmulatorResponse, RequestContext
from reconciler.emulator.errors import ServiceError
from reconciler.emulator.access import ensure_users
from reconciler.emulator.entities import AccessEntry
from reconciler.emulator.faults import ConnectionDropped, Fault, Faults
from reconciler.emulator.ratelimit import RateLimiter, Verdict
from reconciler.emulator.records import EmbedGrant, Notification, RequestRecord
from reconciler.emulator.routing import Route, allowed_methods, match
from reconciler.emulator.seed import SeedError, dump_store, load_seed
from reconciler.emulator.store import Company, Store, iso
from reconciler.errors import ConfigError

DEMO_SEED = Path(__file__).with_name("demo_seed.yaml")
ROUTES: tuple[Route, ...] = (
    *routes_workspaces.ROUTES, *routes_connect.ROUTES, *routes_embed.ROUTES, *routes_access.ROUTES,
    *routes_plan.ROUTES, *routes_files.ROUTES, *routes_assets.ROUTES, *routes_directory.ROUTES,
)

log = logging.getLogger(__name__)


class DataFileError(ConfigError):
    """The emulator's data file cannot be created (a missing or read-only
    directory, a full disk); the CLI reports it as exit 1."""


class Emulator:
    """A stateful, in-memory Workspace Collaboration Service.

    ``clock`` drives rate-limit windows, upload and embed expiry, conversion
    and timestamps; ``data_path``, when given, receives the whole store
    (seed YAML) after every request that changed something.
    """

    def __init__(self, store: Store, *, clock: Clock | None = None, rate_limits: Mapping[str, int] | None = None,
                 data_path: Path | None = None, fault_seed: int | None = 0,
                 conversion_seconds: float = 30.0) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.rate_limiter = RateLimiter(self.clock, rate_limits)
        self.data_path = data_path
        self.faults = Faults(fault_seed)
        self.conversion_seconds = conversion_seconds
        self.requests: list[RequestRecord] = []
        self.notifications: list[Notification] = []
        self.embed_grants: dict[str, EmbedGrant] = {}
        self._lock = threading.RLock()

    # -- construction -------------------------------------------------------
    @classmethod
    def from_seed(cls, doc: Any, *, clock: Clock | None = None, **options: Any) -> Emulator:
        """From a parsed seed document (the seed format of README.md)."""
        clock = clock or SystemClock()
        return cls(_load_store(doc, clock), clock=clock, **options)

    @classmethod
    def from_seed_file(cls, path: Path | None, *, clock: Clock | None = None, **options: Any) -> Emulator:
        """From a seed file (None: the built-in demo seed); nothing is persisted."""
        source = path or DEMO_SEED
        return cls._from_source(source, clock=clock, **options)

    @classmethod
    def from_file(cls, path: Path, *, seed_path: Path | None = None, clock: Clock | None = None,
                  **options: Any) -> Emulator:
        """From the data file ``path`` if it exists, else from ``seed_path``
        (or the demo seed), writing ``path`` at once; every later change is
        persisted to ``path``."""
        path = Path(path)
        source = path if path.exists() else (seed_path or DEMO_SEED)
        emulator = cls._from_source(source, clock=clock, data_path=path, **options)
        if not path.exists():
            try:
                emulator.save()
            except OSError as exc:
                raise DataFileError(f"Cannot write the emulator data file {path}: {exc.strerror or exc}. "
                                    "Give a path in a directory that exists and can be written.") from exc
        return emulator

    @classmethod
    @gc_paused()
    def _from_source(cls, source: Path, **options: Any) -> Emulator:
        try:
            return cls.from_seed(_read_yaml(source), **options)
        except SeedError as exc:
            raise SeedError(f"{source}: {exc}") from None

    # -- inspection ---------------------------------------------------------
    def company_tokens(self) -> dict[str, str]:
        """Company name -> bearer token."""
        return {name: c.token for name, c in self.store.companies.items()}

    def request_count(self, method: str | None = None, path_prefix: str | None = None) -> int:
        """How many requests matched ``method`` and started with ``path_prefix``."""
        return sum(1 for r in self.requests
                   if (method is None or r.method == method.upper())
                   and (path_prefix is None or r.path.startswith(path_prefix)))

    def save(self) -> None:
        """Write the store to ``data_path`` atomically (temp file, fsync, rename)."""
        if self.data_path is None:
            return
        with self._lock:
            text = yaml.dump(dump_store(self.store), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        write_data_file(self.data_path, text)

    # -- the handler ----------------------------------------------------------
    def handle(self, method: str, path: str, query: Sequence[tuple[str, str]], headers: Mapping[str, str],
               body: bytes, *, base_url: str | None = None) -> EmulatorResponse:
        """Answer one request.  Raises ``ConnectionDropped`` when a fault
        drops the connection (before or after the change was made)."""
        method = method.upper()
        lowered = {k.lower(): v for k, v in headers.items()}
        base = (base_url or f"http://{lowered.get('host', 'localhost')}").rstrip("/")
        ctx = RequestContext(self, None, method, path, list(query), lowered, body, base)
        with self._lock:
            early, route, params, verdict, fault = self._admit(ctx)
        if early is not None:
            return self._record(ctx, early, fault)
        assert route is not None and verdict is not None
        if fault is not None and fault.kind == "latency":
            self.clock.sleep(fault.seconds)
        with self._lock:
            notified = len(self.notifications)
            response = self._run(ctx, route, params)
            if fault is not None and fault.kind == "tamper" and response.status < 400:
                self._tamper(ctx, fault)
            committed = True
            if ctx.modified:
                try:
                    self.save()
                except Exception as exc:  # noqa: BLE001 - any failed write is undone and answered 500
                    committed = False
                    response = self._undo_unsaved_change(exc, notified)
            response.headers.update(verdict.headers() if route.authenticated else {})
        if fault is not None and fault.kind == "after_commit" and committed:
            self._record(ctx, response, fault, dropped=True)
            raise ConnectionDropped(method, path, committed=True)
        return self._record(ctx, response, fault)

    def _tamper(self, ctx: RequestContext, fault: Fault) -> None:
        """A ``tamper`` fault: someone gives ``fault.email`` ``fault.role`` on a list, right after this request."""
        assert ctx.co is not None  # the request was authenticated
        ws = ctx.co.workspace(fault.workspace)
        if ws is None:
            return
        now = ctx.now_iso()
        old_users, old_domains = list(ws.access.users), list(ws.access.domains)
        ws.access.users[:] = [e for e in ws.access.users if e.key != fault.email]
        ws.access.users.append(AccessEntry(ctx.new_id("wu"), fault.email, fault.role, now, now))
        ctx.co.access_replaced(ws.access, old_users, old_domains)
        ensure_users(ctx.co, [fault.email], now, ctx.new_id)
        ctx.changed()

    def _admit(self, ctx: RequestContext) -> tuple[EmulatorResponse | None, Route | None, dict[str, str],
                                                   Verdict | None, Fault | None]:
        """Everything before the handler; an answer here ends the request."""
        route, params, known = match(ROUTES, ctx.method, ctx.path)
        needs_auth = route.authenticated if route else ctx.path.startswith("/v1/") or ctx.path == "/v1"
        if needs_auth:
            ctx.company = self._authenticate(ctx.headers)
            if ctx.company is None:
                return _error(ServiceError(401, "Missing or invalid bearer token.")), None, {}, None, None
        if route is None and known:
            allow = ", ".join(allowed_methods(ROUTES, ctx.path))
            refusal = ServiceError(405, f"{ctx.method} is not allowed on {ctx.path}; allowed: {allow}.",
                                   headers={"Allow": allow})
            return _error(refusal), None, {}, None, None
        if route is None:
            return _error(ServiceError(404, f"No such endpoint: {ctx.method} {ctx.path}.")), None, {}, None, None
        verdict = self.rate_limiter.check(ctx.co.name, route.limit_class) if route.authenticated else None
        if verdict is not None and not verdict.allowed:
            answer = _error(ServiceError(429, f"Rate limit of {verdict.limit} requests per minute exceeded "
                                              f"for {route.limit_class.replace('_', ' ')}; retry after "
                                              f"{verdict.retry_after} s."))
            answer.headers.update(verdict.headers())
            return answer, None, {}, None, None
        fault = self.faults.take(ctx.method, ctx.path)
        if fault is not None and fault.kind == "status":
            answer = _error(ServiceError(fault.status, f"Injected fault: {fault.status}."))
            answer.headers.update(verdict.headers() if verdict else {})
            return answer, None, {}, None, fault
        if fault is not None and fault.kind == "drop":
            self.requests.append(RequestRecord(ctx.method, ctx.path, 0, ctx.company.name if ctx.company else None,
                                               self.clock.now(), "drop", True))
            raise ConnectionDropped(ctx.method, ctx.path, committed=False)
        return None, route, params, verdict or Verdict(True, 0, 0, 0, 0), fault

    def _undo_unsaved_change(self, exc: Exception, notified: int) -> EmulatorResponse:
        """The request's change could not be written: put memory back to what
        the data file holds (the last whole write; ``os.replace`` never leaves
        half a file), forget the notifications it recorded, answer 500."""
        assert self.data_path is not None
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__
        log.error("emulator: writing %s failed (%s); the change is undone", self.data_path, reason)
        del self.notifications[notified:]
        try:
            restored = _load_store(_read_yaml(self.data_path), self.clock)
        except SeedError as reload_exc:
            log.error("emulator: reading %s back failed: %s", self.data_path, reload_exc)
            return _error(ServiceError(500, f"The change could not be saved ({reason}) and the data file could not "
                                            "be read back; the emulator's data may differ from its data file."))
        self.store.companies = restored.companies
        self.store.ids = restored.ids
        return _error(ServiceError(500, f"The change could not be saved ({reason}); nothing was changed."))

    def _authenticate(self, headers: Mapping[str, str]) -> Company | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.store.company_by_token(token.strip())

    def _run(self, ctx: RequestContext, route: Route, params: dict[str, str]) -> EmulatorResponse:
        try:
            reply = route.handler(ctx, **params)
        except ServiceError as exc:
            # A refused request changes nothing: handlers validate before
            # they modify, so there is nothing to roll back.
            return _error(exc)
        except Exception as exc:  # noqa: BLE001 - the service answers 500, the log keeps the trace
            log.exception("emulator handler failed")
            return _error(ServiceError(500, f"Unexpected error: {exc!r}"))
        if isinstance(reply, EmulatorResponse):
            return reply
        status, payload = reply
        return EmulatorResponse(status, {"Content-Type": "application/json"}, json.dumps(payload).encode())

    def _record(self, ctx: RequestContext, response: EmulatorResponse, fault: Fault | None, *,
                dropped: bool = False) -> EmulatorResponse:
        self.requests.append(RequestRecord(ctx.method, ctx.path, response.status,
                                           ctx.company.name if ctx.company else None, self.clock.now(),
                                           fault.kind if fault else None, dropped))
        return response


def _error(exc: ServiceError) -> EmulatorResponse:
    return EmulatorResponse(exc.status, {"Content-Type": "application/json", **exc.headers},
                            json.dumps(exc.envelope()).encode())


# The C implementations when PyYAML has them: a large data file is rewritten
# after every change.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_data_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temp file beside it, fsync,
    ``os.replace``.  On any failure the previous file is left as it was and
    the temp file is removed."""
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _load_store(doc: Any, clock: Clock) -> Store:
    """``load_seed``, with any value of a shape it does not check one by one
    reported as a ``SeedError`` too (never a traceback)."""
    try:
        return load_seed(doc, now=iso(clock.now()))
    except SeedError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise SeedError(f"malformed seed ({type(exc).__name__}: {exc})") from None


def _read_yaml(path: Path) -> Any:
    """The parsed YAML of a seed or data file; every way it can be unreadable
    is a ``SeedError`` (the caller prefixes the file name)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SeedError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise SeedError(f"not UTF-8 text: byte {raw[exc.start]:#04x} on line {line}") from None
    stream = io.StringIO(text)
    stream.name = str(path)  # so YAML's own messages name the file, as they did when reading it directly
    try:
        return yaml.load(stream, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise SeedError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise SeedError("not valid YAML: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise SeedError(f"not valid YAML: {exc}") from None
