"""``directory pull URL`` and ``directory sync MANIFESTS_DIR``: the directory from a SCIM service, and into git.

``pull`` reads every User and Group of a SCIM 2.0 service the company
already runs (``directory.client``) and mirrors them into the directory of
the state (``directory.store``): everything is read before anything is
written, so an error at any page leaves the directory as it was.  ``sync``
writes that directory into the manifests as ``directory.yaml``
(``directory.sync``) for review, and says what changed.

The pull's token comes from ``--token-file`` or ``RECONCILER_DIRECTORY_PULL_TOKEN``,
never from the command line (where any process of the machine can read it),
and is never printed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.errors import ConfigError
from reconciler.text import plural

if TYPE_CHECKING:
    import httpx

    from reconciler.clock import Clock
    from reconciler.directory.sync import SyncOutcome


@dataclass(frozen=True)
class SyncReport:
    """What ``directory_sync`` did, to print: the outcome, and the state the directory came from."""

    outcome: SyncOutcome
    address: str

    def text(self) -> str:
        """The lines for stdout: "no changes", or what the file now says differently."""
        path = self.outcome.path
        if not self.outcome.written:
            return f"{path} already holds the directory of the state {self.address}: no changes.\n"
        lines = "".join(f"  {line}\n" for line in self.outcome.changes)
        return f"Wrote {path} from the directory of the state {self.address}:\n{lines}"

    def warnings(self) -> tuple[str, ...]:
        """The lines for stderr: what the directory holds that the file cannot say."""
        return tuple(f"Warning: {w}." for w in self.outcome.warnings)


def directory_pull(*, url: str, state_path: Path | str | None, token_file: Path | None,
                   ca_bundle: Path | None = None, timeout: float = 30.0, connect_timeout: float = 10.0,
                   page_size: int | None = None, environ: Mapping[str, str] | None = None,
                   transport: httpx.BaseTransport | None = None, clock: Clock | None = None,
                   now: Callable[[], datetime] | None = None) -> str:
    """Read every User and Group of the SCIM service at ``url`` and mirror them into the directory of the
    state ``state_path``; the line to print.  ``ca_bundle`` verifies the service's certificate instead of
    certifi's authorities (an identity provider behind a company's own CA), ``timeout`` and
    ``connect_timeout`` bound each answer and each connection, ``page_size`` is the SCIM ``count`` asked
    per page (None: the client's ``DEFAULT_PAGE_SIZE``, not imported here so that ``directory sync``
    does not load httpx).  ``transport`` (tests) replaces the network, ``clock`` is what rate-limit and
    retry waits go through, ``now`` the clock of the store's days."""
    from reconciler.directory.client import DEFAULT_PAGE_SIZE, DirectoryPullError, ScimReader, scim_http_client
    from reconciler.directory.store import open_directory_store, utc_now

    if state_path is None:
        raise ConfigError("directory pull needs the state whose directory it fills: give --state FILE|URL (or set "
                          "RECONCILER_STATE). Nothing was read or written.")
    token = _token(token_file, os.environ if environ is None else environ)
    with scim_http_client(url, token, transport=transport, timeout=timeout, connect_timeout=connect_timeout,
                          verify=str(ca_bundle) if ca_bundle is not None else True) as http:
        reader = ScimReader(http, clock=clock, page_size=DEFAULT_PAGE_SIZE if page_size is None else page_size)
        with open_directory_store(str(state_path), now=now or utc_now) as store:
            try:
                read = reader.read_all()
            except DirectoryPullError as exc:
                raise DirectoryPullError(f"{exc} Nothing was written to the directory of the state "
                                         f"{store.address}.") from exc
            counts = store.mirror(read.users, read.groups, today=store.today())
            address = store.address
    changed = [f"{counts.deactivated} newly deactivated" if counts.deactivated else "",
               f"{counts.deleted} deleted since the last pull" if counts.deleted else ""]
    said = "; ".join(c for c in changed if c) or "nobody newly deactivated or deleted"
    return (f"Pulled {plural(counts.users, 'user')} and {plural(counts.groups, 'group')} from the SCIM service at "
            f"{reader.base} into the directory of the state {address} ({said}).\n")


def directory_sync(*, manifests: Path, state_path: Path | str | None) -> SyncReport:
    """Write ``manifests``/directory.yaml from the directory of the state (``state_path``, else the state
    file beside the manifests) when it changes."""
    from reconciler.directory.store import open_directory_store
    from reconciler.directory.sync import sync_directory_file
    from reconciler.state.file import default_state_path

    address = str(state_path) if state_path is not None else str(default_state_path(manifests))
    with open_directory_store(address) as store:
        document = store.read()
        shown = store.address
    if document.serial == 0:
        # A mistyped --state names a state without a directory: writing its empty directory would drop every
        # group and every leaver from the reviewed file.
        raise ConfigError(f"The state {shown} holds no directory: no identity provider has provisioned "
                          "'reconciler directory serve' with it, and no 'reconciler directory pull' has filled it. "
                          f"Check --state (or RECONCILER_STATE). Nothing was written.")
    directory = document.snapshot()
    return SyncReport(outcome=sync_directory_file(directory, manifests, address=shown), address=shown)


def _token(token_file: Path | None, environ: Mapping[str, str]) -> str:
    """The pull's token: the file's, else the environment's; ``ConfigError`` when neither has one."""
    from reconciler.directory.client import TOKEN_ENV
    from reconciler.tokens import read_token

    token = read_token(token_file, environ, TOKEN_ENV, after=" Nothing was read or written.")
    if token is None:
        raise ConfigError(f"directory pull needs the SCIM service's token: set {TOKEN_ENV} or give --token-file "
                          "FILE (never the token itself on the command line). Nothing was read or written.")
    return token
