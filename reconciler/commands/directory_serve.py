"""``reconciler directory serve``: the SCIM 2.0 service provider an identity provider pushes to."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from reconciler.errors import ConfigError
from reconciler.tokens import read_token

TOKEN_ENV = "RECONCILER_DIRECTORY_TOKEN"


def read_directory_token(token_file: Path | None, env: Mapping[str, str],
                         warn: Callable[[str], None] | None = None) -> str:
    """The bearer token: ``token_file``'s, else ``RECONCILER_DIRECTORY_TOKEN``; never argv.
    ``ConfigError`` (exit 1) when there is none; the token itself is never in a message."""
    token = read_token(token_file, env, TOKEN_ENV, warn=warn, after=" Nothing was served.")
    if token is not None:
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
