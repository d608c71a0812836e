"""An application served over HTTPS on 127.0.0.1 with a certificate a private authority (trustme's) signed:
what ``--ca-bundle`` is tested against.  Nothing on this machine trusts that authority, as nothing trusts a
company's own: a client verifying with certifi's authorities refuses the server, one given the authority's
certificate reaches it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.serving import background_server


@dataclass(frozen=True)
class PrivateCa:
    """The files of a private authority and of the one server certificate it signed, for 127.0.0.1."""

    ca_bundle: Path  # the authority's certificate (PEM): what --ca-bundle is given
    server_pem: Path  # the server's key and certificate chain (PEM): what the server is given


def private_ca(folder: Path) -> PrivateCa:
    """A new authority and its certificate for 127.0.0.1, written into ``folder``."""
    import trustme

    authority = trustme.CA()
    server = authority.issue_cert("127.0.0.1")
    paths = PrivateCa(ca_bundle=folder / "private-ca.pem", server_pem=folder / "127.0.0.1.pem")
    authority.cert_pem.write_to_path(str(paths.ca_bundle))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths.server_pem))
    return paths


@contextmanager
def served_over_https(app: Any, ca: PrivateCa, *, what: str) -> Iterator[str]:
    """``app`` served on a free port of 127.0.0.1 with ``ca``'s server certificate: its ``https://`` URL."""
    url, stop = background_server(app, what=what, forwarded_allow_ips="127.0.0.1", ssl_certfile=str(ca.server_pem))
    try:
        yield url
    finally:
        stop()
