"""``reconciler directory serve``: the SCIM 2.0 service provider an identity provider pushes to."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from reconciler.errors import ConfigError

TOKEN_ENV = "RECONCILER_DIRECTORY_TOKEN"


def read_directory_token(token_file: Path | None, env: Mapping[str, str],
                         warn: Callable[[str], None] | None = None) -> str:
    """The bearer token: the first line of ``token_file``, else ``RECONCILER_DIRECTORY_TOKEN``; never argv.
    ``ConfigError`` (exit 1) when there is none; the token itself is never in a message."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
            mode = token_file.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            raise ConfigError(f"Cannot read the token file {token_file}: {reason}. Nothing was served.") from None
        if not token:
            raise ConfigError(f"The token file {token_file} is empty. Nothing was served.")
        if mode & 0o077 and warn is not None:
            warn(f"Warning: the token file {token_file} can be read by other users of this machine (mode "
                 f"{stat.filemode(mode)}); 'chmod 600 {token_file}' keeps it yours.")
        return token
    token = env.get(TOKEN_ENV, "").strip()
    if token:
        return token
    raise ConfigError(
        f"No token for the SCIM endpoint: put one in a file and pass --token-file FILE, or set {TOKEN_ENV}. "
        "It is the bearer token your identity provider sends (Okta: API token of the app's Provisioning "
        "tab; Entra ID: Secret Token); make one with e.g. 'openssl rand -hex 32 > token && chmod 600 token'. "
        "Nothing was served.")


def serve_directory(*, state: str | Path, host: str, port: int, token_file: Path | None,
                    forwarded_allow_ips: str, announce: Callable[[str], None],
                    warn: Callable[[str], None], env: Mapping[str, str] | None = None) -> None:
    """Serve until interrupted; once listening, ``announce`` gets the base URL (the first line) and a sentence."""
    from reconciler.directory.server import directory_app, serve
    from reconciler.directory.store import open_directory_store

    token = read_directory_token(token_file, os.environ if env is None else env, warn)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(message)s")
    store = open_directory_store(str(state))
    try:
        store.snapshot()  # an unreadable directory, or a database that cannot be reached, is said now, not later
        app = directory_app(store, token)

        def ready(url: str) -> None:
            announce(f"{url}/scim/v2")  # the first line is the bare base URL: SCIM_URL=$(... | head -n 1)
            announce(f"SCIM directory of the state {store.address} listening on {url}/scim/v2 (Ctrl-C stops it).")

        serve(app, host=host, port=port, forwarded_allow_ips=forwarded_allow_ips, ready=ready)
    finally:
        store.close()
