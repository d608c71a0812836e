"""Where a command points: the real service, or the embedded emulator.

The CLI turns flags and environment into a ``Service``; this module turns a
``Service`` into a ``WorkspaceClient``.  ("Service", not "target": in this
tool a target is only ever an address given to ``--target``; and not
"connection", which is ``api/connection.py``, the HTTP client it makes.)  It is the one place that knows both the
client and the emulator (the client must not know the emulator exists).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client, normalise_base_url
from reconciler.api.ratelimit import RateLimits
from reconciler.errors import ConfigError
from reconciler.tokens import read_token

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.apply.audit import AuditLog
    from reconciler.emulator import Emulator

IN_PROCESS_BASE_URL = "http://emulator.invalid"
TOKEN_ENV = "RECONCILER_TOKEN"
BASE_URL_ENV = "RECONCILER_BASE_URL"


@dataclass(frozen=True)
class Service:
    """The service a command talks to, and how: address or emulator file, token, limits, timeouts."""

    base_url: str | None = None
    token_file: Path | None = None
    emulator_file: Path | None = None
    emulator_seed: Path | None = None
    page_size: int = 100
    retries: int = 3
    rate_limits: Mapping[str, int] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    timeout: float = 30.0  # seconds to wait for each read of an answer
    connect_timeout: float = 10.0
    ca_bundle: Path | None = None
    # Where notices go (a slow answer, a token file others can read); the CLI
    # passes stderr, tests a list's append.
    notice: Callable[[str], None] | None = None
    trace: Callable[[str], None] | None = None  # --debug: one line per request and answer
    audit: AuditLog | None = None  # apply --audit-log: one JSON line per request, on every client opened

    def label(self) -> str:
        """Which service a plan was made against: the normalised address, or
        the emulator's data file (a saved plan is refused elsewhere)."""
        if self.emulator_file is not None:
            return f"the emulator of {self.emulator_file.resolve()}"
        base_url = self.base_url or self.env.get(BASE_URL_ENV) or ""
        try:
            return normalise_base_url(base_url) if base_url else ""
        except ConfigError:
            return base_url

    def limits(self) -> RateLimits:
        """The configured requests per minute, defaults for classes not given."""
        return RateLimits.from_mapping(self.rate_limits)


def parse_rate_limits(values: Sequence[str]) -> dict[str, int]:
    """``--rate-limit CLASS=N`` flags as a mapping; the classes and values are
    judged by ``RateLimits.from_mapping``, the one place that knows them."""
    limits: dict[str, int] = {}
    for value in values:
        name, _, number = value.partition("=")
        if not number.isdigit():
            raise ConfigError(f"--rate-limit {value!r} is not CLASS=N with N a whole number of requests per minute.")
        limits[name] = int(number)
    try:
        RateLimits.from_mapping(limits)
    except ConfigError as exc:
        raise ConfigError(f"--rate-limit: {exc}") from None
    return limits


def warn_if_seed_ignored(service: Service) -> None:
    """Say on ``service.notice`` when ``--seed`` will have no effect: the seed
    only creates a missing ``--emulator`` FILE, and an existing FILE is used as
    it is, so an edited seed would otherwise be silently ignored.  Called once,
    when the command starts (not from ``open_client``, which a command may call
    twice, after its first call has created the file)."""
    if service.emulator_seed is None or service.emulator_file is None or service.notice is None:
        return
    if service.emulator_file.exists():
        service.notice(f"Warning: --seed {service.emulator_seed} is ignored: the emulator data file "
                       f"{service.emulator_file} already exists and is used as it is (a seed only creates a missing "
                       f"file). To start afresh from the seed, delete {service.emulator_file}.")


@contextmanager
def open_client(service: Service) -> Iterator[WorkspaceClient]:
    """A client for ``service``; closes its HTTP connections afterwards."""
    limits = service.limits()
    if service.emulator_file is not None:
        if service.base_url:
            raise ConfigError("Give either --emulator or --base-url, not both.")
        from reconciler.emulator import Emulator, emulator_transport

        emulator = Emulator.from_file(service.emulator_file, seed_path=service.emulator_seed)
        token = _read_token(service, required=False) or _only_company_token(emulator, service.emulator_file)
        http = make_http_client(IN_PROCESS_BASE_URL, token, transport=emulator_transport(emulator),
                                trace=service.trace)
    else:
        base_url = service.base_url or service.env.get(BASE_URL_ENV)
        if not base_url:
            raise ConfigError(
                "No service to talk to: set RECONCILER_BASE_URL (or --base-url) to the service address "
                "and RECONCILER_TOKEN to its token, or pass --emulator FILE to rehearse against the "
                "embedded emulator. reconciler never falls back to the emulator on its own."
            )
        http = make_http_client(base_url, _required_token(service), timeout=service.timeout, connect_timeout=service.connect_timeout,
                                verify=str(service.ca_bundle) if service.ca_bundle else True, trace=service.trace)
    if service.audit is not None:
        service.audit.install(http)
    with http:
        yield WorkspaceClient(http, rate_limits=limits, page_size=service.page_size,
                              max_attempts=service.retries + 1,
                              on_slow=service.notice if service.emulator_file is None else None)


def _read_token(service: Service, *, required: bool) -> str | None:
    token = read_token(service.token_file, service.env, TOKEN_ENV, warn=service.notice)
    if token is None and required:
        raise ConfigError(
            "No token: set RECONCILER_TOKEN, or pass --token-file FILE. "
            "(A token is never accepted on the command line, where it would land in shell history.)"
        )
    return token


def _required_token(service: Service) -> str:
    token = _read_token(service, required=True)
    assert token is not None  # required: a missing token raised ConfigError
    return token


def _only_company_token(emulator: Emulator, data_file: Path) -> str:
    tokens = emulator.company_tokens()
    if len(tokens) == 1:
        return next(iter(tokens.values()))
    raise ConfigError(
        f"The emulator data in {data_file} has {len(tokens)} companies; set RECONCILER_TOKEN "
        "to the token of the one to act as."
    )
