"""Where a command points: the real service, or the embedded emulator.

The CLI turns flags and environment into a ``Target``; this module turns a
Target into a ``WorkspaceClient``.  It is the one place that knows both the
client and the emulator (the client must not know the emulator exists).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client, normalise_base_url
from reconciler.api.ratelimit import RateLimits
from reconciler.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.apply.audit import AuditLog

IN_PROCESS_BASE_URL = "http://emulator.invalid"
TOKEN_ENV = "RECONCILER_TOKEN"
BASE_URL_ENV = "RECONCILER_BASE_URL"


@dataclass(frozen=True)
class Target:
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

    def service_label(self) -> str:
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


def warn_if_seed_ignored(target: Target) -> None:
    """Say on ``target.notice`` when ``--seed`` will have no effect: the seed
    only creates a missing ``--emulator`` FILE, and an existing FILE is used as
    it is, so an edited seed would otherwise be silently ignored.  Called once,
    when the command starts (not from ``open_client``, which a command may call
    twice, after its first call has created the file)."""
    if target.emulator_seed is None or target.emulator_file is None or target.notice is None:
        return
    if target.emulator_file.exists():
        target.notice(f"Warning: --seed {target.emulator_seed} is ignored: the emulator data file "
                      f"{target.emulator_file} already exists and is used as it is (a seed only creates a missing "
                      f"file). To start afresh from the seed, delete {target.emulator_file}.")


@contextmanager
def open_client(target: Target) -> Iterator[WorkspaceClient]:
    """A client for ``target``; closes its HTTP connections afterwards."""
    limits = target.limits()
    if target.emulator_file is not None:
        if target.base_url:
            raise ConfigError("Give either --emulator or --base-url, not both.")
        from reconciler.emulator import Emulator, emulator_transport

        emulator = Emulator.from_file(target.emulator_file, seed_path=target.emulator_seed)
        token = _read_token(target, required=False) or _only_company_token(emulator, target.emulator_file)
        http = make_http_client(IN_PROCESS_BASE_URL, token, transport=emulator_transport(emulator),
                                trace=target.trace)
    else:
        base_url = target.base_url or target.env.get(BASE_URL_ENV)
        if not base_url:
            raise ConfigError(
                "No service to talk to: set RECONCILER_BASE_URL (or --base-url) to the service address "
                "and RECONCILER_TOKEN to its token, or pass --emulator FILE to rehearse against the "
                "embedded emulator. reconciler never falls back to the emulator on its own."
            )
        token = _read_token(target, required=True)
        assert token is not None
        http = make_http_client(base_url, token, timeout=target.timeout, connect_timeout=target.connect_timeout,
                                verify=str(target.ca_bundle) if target.ca_bundle else True, trace=target.trace)
    if target.audit is not None:
        target.audit.install(http)
    with http:
        yield WorkspaceClient(http, rate_limits=limits, page_size=target.page_size,
                              max_attempts=target.retries + 1,
                              on_slow=target.notice if target.emulator_file is None else None)


def _read_token(target: Target, *, required: bool) -> str | None:
    if target.token_file is not None:
        try:
            token = target.token_file.read_text(encoding="utf-8").strip()
            mode = target.token_file.stat().st_mode
        except OSError as exc:
            raise ConfigError(f"Cannot read the token file {target.token_file}: {exc.strerror}.") from exc
        if mode & 0o077 and target.notice is not None:
            target.notice(f"Warning: the token file {target.token_file} can be read by other users of this "
                          f"machine (mode {stat.filemode(mode)}); 'chmod 600 {target.token_file}' keeps it yours.")
        if not token:
            raise ConfigError(f"The token file {target.token_file} is empty.")
        return token
    token = target.env.get(TOKEN_ENV, "").strip()
    if token:
        return token
    if required:
        raise ConfigError(
            "No token: set RECONCILER_TOKEN, or pass --token-file FILE. "
            "(A token is never accepted on the command line, where it would land in shell history.)"
        )
    return None


def _only_company_token(emulator: object, data_file: Path) -> str:
    tokens = emulator.company_tokens()  # type: ignore[attr-defined]
    if len(tokens) == 1:
        return next(iter(tokens.values()))
    raise ConfigError(
        f"The emulator data in {data_file} has {len(tokens)} companies; set RECONCILER_TOKEN "
        "to the token of the one to act as."
    )
