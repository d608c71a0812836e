"""The HTTP connection to the service: its address and its headers.

The client itself takes any ``httpx.Client``; this module makes the one the
tool uses, so that every request carries the bearer token, asks for JSON and
names the tool, and so that the token only ever travels over TLS (or to this
machine, or to the in-process emulator).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

import httpx

from reconciler import __version__
from reconciler.api.deadline import deadline_transport, tls_context
from reconciler.errors import ConfigError

API_VERSION_SEGMENT = "/v1"
USER_AGENT = f"reconciler/{__version__}"

# RFC 2606 reserves ".invalid": the in-process emulator uses such a name,
# and only with an in-process transport is it allowed over plain http.
_RESERVED_SUFFIX = ".invalid"


def normalise_base_url(url: str, *, in_process: bool = False) -> str:
    """The service address, ending in ``/v1`` and without a trailing slash.

    Accepts the address with or without the ``/v1`` segment and trailing
    slashes (``https://api.example.com``, ``https://api.example.com/v1/``).
    Raises ``ConfigError`` for a scheme other than https, for plain http
    except to ``localhost``, ``127.0.0.0/8`` and ``::1`` written literally
    (or, ``in_process``, a host under ``.invalid`` that no network reaches),
    for a missing host, and for user names, passwords, query strings or
    fragments in the address.
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw)
    except ValueError as exc:  # e.g. an unbalanced IPv6 bracket
        raise ConfigError(f"The service address cannot be read as an address: {exc}.") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"The service address {_shown(raw)} is not an https:// address with a host name. "
            "Give the service address in full, for example https://api.example.com (the /v1 "
            "segment may be left out)."
        )
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            "The service address contains a user name or password; remove it. The token is read "
            "from RECONCILER_TOKEN or --token-file, never from the address."
        )
    if parts.query or parts.fragment:
        raise ConfigError(
            f"The service address {_shown(raw)} has a query string or fragment; give only the "
            "scheme, host and (optionally) the path up to /v1."
        )
    host = parts.hostname or ""
    if not host:
        raise ConfigError(f"The service address {_shown(raw)} has no host name.")
    if scheme == "http" and not plain_http_allowed(host, in_process=in_process):
        raise ConfigError(
            f"The service address {_shown(raw)} uses plain http, which would send the token "
            "unencrypted over the network. Use https://; plain http is accepted only for this "
            "machine, written literally: localhost, 127.0.0.0/8 or ::1."
        )
    path = parts.path.rstrip("/")
    if not path.endswith(API_VERSION_SEGMENT):
        path += API_VERSION_SEGMENT
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def make_http_client(
    base_url: str,
    token: str,
    *,
    transport: httpx.BaseTransport | None = None,
    timeout: float = 30.0,
    connect_timeout: float = 10.0,
    verify: str | bool = True,
    trace: Callable[[str], None] | None = None,
) -> httpx.Client:
    """An ``httpx.Client`` for the service at ``base_url`` (normalised).

    Every request carries ``Authorization: Bearer <token>``, ``Accept:
    application/json`` and ``User-Agent: reconciler/<version>``.  Redirects are
    not followed: the description documents none, and following one could
    carry the token elsewhere.  ``transport`` replaces the network (the
    in-process emulator, a test's mock).  ``timeout`` bounds each read and
    write and, over the network, each answer as a whole (see ``deadline.py``;
    the ``Requester`` opens that deadline), ``connect_timeout`` the
    connection.  ``verify`` is ``True`` or the
    path of a CA bundle: TLS verification cannot be turned off.  ``trace``
    gets one line per request and per answer (``--debug``), with the token
    and the query of presigned addresses redacted.  Raises
    ``ConfigError`` for a bad address or a token that cannot be sent in a
    header; no message names the token.
    """
    if verify is False:
        raise ConfigError("TLS verification cannot be turned off; give a CA bundle instead.")
    normalised = normalise_base_url(base_url, in_process=transport is not None)
    check_token(token)
    # Over the network, one context for the transport and the client (certifi's bundle read once); none for
    # a transport in this process (the emulator).
    context = tls_context(verify) if transport is None else True
    return httpx.Client(
        base_url=normalised,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        },
        transport=transport if transport is not None else deadline_transport(verify=context),
        timeout=httpx.Timeout(timeout, connect=connect_timeout),
        verify=context,  # for a proxy from the environment (HTTPS_PROXY) too
        follow_redirects=False,
        event_hooks=_trace_hooks(trace) if trace is not None else None,
    )


def _trace_hooks(trace: Callable[[str], None]) -> dict[str, list[Callable[..., None]]]:
    def on_request(request: httpx.Request) -> None:
        trace(f"> {request.method} {redacted_url(request)}")

    def on_response(response: httpx.Response) -> None:
        limits = " ".join(f"{k}={v}" for k, v in response.headers.items() if k.lower().startswith("x-ratelimit")
                          or k.lower() == "retry-after")
        trace(f"< {response.status_code} {response.request.method} {redacted_url(response.request)} {limits}".rstrip())

    return {"request": [on_request], "response": [on_response]}


def redacted_url(request: httpx.Request) -> str:
    """The request's address for a log: a presigned address (sent without the
    service's token) loses its whole query, which is where its signature is."""
    url = request.url
    if "Authorization" in request.headers or not url.query:
        return str(url)
    return str(url.copy_with(query=b"[redacted]"))


def plain_http_allowed(host: str, *, in_process: bool = False) -> bool:
    """Whether plain http may carry the token to ``host``: this machine, written literally.  (In process, the
    emulator's reserved names too.)"""
    # Literally: a name that merely resolves to this machine (or ends in
    # .invalid and was given a DNS entry by someone) could send the token
    # anywhere.
    host = host.lower()
    if host == "localhost" or (in_process and host.endswith(_RESERVED_SUFFIX)):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(token: str, *, what: str = "The token", env_name: str = "RECONCILER_TOKEN") -> None:
    """``ConfigError`` for a bearer token that cannot be sent in a header (``what``: how a message names it;
    ``env_name``: where it is set).  Checked here because the HTTP layer's own error for an illegal header
    value quotes the value, and with it the token."""
    if not token:
        raise ConfigError(f"{what} is empty; set {env_name} or pass --token-file.")
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise ConfigError(
            f"{what} contains spaces, line breaks or characters outside ASCII, so it cannot be "
            f"sent in a header; check {env_name} or the file given with --token-file."
        )


def _shown(url: str) -> str:
    """``url`` for a message: without any user name or password in it."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return repr(urlunsplit(parts))
