"""Reading every User and Group of a SCIM 2.0 service (``reconciler directory pull``).

A SCIM service lists resources a page at a time (RFC 7644 §3.4.2.4): a GET
with ``startIndex`` (1-based) and ``count`` answers a ``ListResponse`` with
``totalResults`` and the page's ``Resources``, possibly fewer than ``count``.
``ScimReader`` asks for the next page at ``startIndex`` + the resources
received until ``totalResults`` (as the latest page says it) are read, and
refuses, rather than returns, a listing it cannot trust: a pull that returned
half the users would make the other half leavers in the store.  So an empty
page before ``totalResults``, an id seen twice (a service that ignores
``startIndex``), more than ``max_resources`` resources or more than
``max_pages`` pages (a service that keeps raising ``totalResults``) each end
the pull with an error and nothing is returned.

Plain httpx through the service client's own ``Requester`` rather than
scim2-client: the requester already gives what the pull must have (the
client-side rate limit, 429 waits from ``Retry-After``, retries of 5xx and
lost connections with backoff, at most ``max_attempts`` per call, an answer
bounded in size and in time, every wait on an injected clock, the token
redacted from messages), while scim2-client would still need all of that
around it, and validates resources with scim2-models' strict models where
the store wants them as the service sent them (JSON objects, ids kept, an
extension it does not know included).  What remains, the two listings and
their checks, is a few dozen lines.

Every error is a ``DirectoryPullError``: one paragraph naming the service's
address and the call (``GET /Users?startIndex=101&count=100``), and what to
do; none contains the token.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from reconciler.api.connection import USER_AGENT, check_token, plain_http_allowed
from reconciler.api.deadline import deadline_transport
from reconciler.api.errors import (
    AnswerTooSlow, ApiError, ConnectionFailed, Forbidden, InvalidResponse, NotFound, RateLimited,
    ResponseTooLarge, ServerError, Unauthorized, UnverifiedCertificate, WaitTooLong,
)
from reconciler.api.limits import MAX_LISTED_ITEMS
from reconciler.api.ratelimit import RateLimits
from reconciler.api.requester import Requester
from reconciler.clock import Clock
from reconciler.errors import ConfigError, ReconcilerError
from reconciler.text import plural, printable, shortened

TOKEN_ENV = "RECONCILER_DIRECTORY_PULL_TOKEN"
LIST_RESPONSE = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
USERS, GROUPS = "/Users", "/Groups"

# Resources asked for per page: what Okta and Entra ID ask of a SCIM service themselves.
DEFAULT_PAGE_SIZE = 100
# Per listing.  A million people is far beyond any company this tool serves; the
# cap only stops a service that never stops announcing more.
MAX_RESOURCES = MAX_LISTED_ITEMS
# Per listing: a million resources in full pages of 100.  A service may send fewer than
# asked for, but one sending a handful per page for ten thousand pages is not one to wait
# for (an hour and a half of pages at the default rate limit).
MAX_PAGES = 10_000

JsonObject = dict[str, Any]


class DirectoryPullError(ReconcilerError):
    """A SCIM service could not be read whole: unreachable, refusing, or answering what is not SCIM."""


@dataclass(frozen=True, slots=True)
class ScimResources:
    """Every User and Group a service listed, as the JSON objects it sent."""

    users: tuple[JsonObject, ...]
    groups: tuple[JsonObject, ...]


def scim_base_url(url: str) -> str:
    """The SCIM base address (the part before ``/Users``), without a trailing slash.

    ``ConfigError`` for anything but https (plain http only to this machine,
    written literally: ``localhost``, 127.0.0.0/8, ``::1``; the token would
    otherwise cross the network unencrypted), for a user name or password in
    it, and for a query string or fragment.
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw)
        host = (parts.hostname or "").lower()
    except ValueError as exc:
        raise ConfigError(f"The SCIM address {_shown(raw)} cannot be read as an address: {exc}.") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ConfigError(f"The SCIM address {_shown(raw)} is not an https:// address with a host name. Give the "
                          "SCIM base URL in full, e.g. https://idp.example.com/scim/v2 (the part before /Users).")
    if "@" in parts.netloc:
        raise ConfigError("The SCIM address contains a user name or password; remove it. The token is read from "
                          f"{TOKEN_ENV} or --token-file, never from the address.")
    if parts.query or parts.fragment:
        raise ConfigError(f"The SCIM address {_shown(raw)} has a query string or fragment; give only the base URL "
                          "(the part before /Users).")
    if parts.scheme.lower() == "http" and not plain_http_allowed(host):
        raise ConfigError(f"The SCIM address {_shown(raw)} uses plain http, which would send the token unencrypted "
                          "over the network. Use https://; plain http is accepted only for this machine, written "
                          "literally: localhost, 127.0.0.0/8 or ::1.")
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", ""))


def scim_http_client(url: str, token: str, *, transport: httpx.BaseTransport | None = None,
                     timeout: float = 30.0, connect_timeout: float = 10.0, verify: str | bool = True) -> httpx.Client:
    """An ``httpx.Client`` for the SCIM service at ``url`` (checked by ``scim_base_url``).

    Every request carries the bearer token, asks for SCIM JSON and names the
    tool; redirects are not followed (one could carry the token elsewhere);
    ``timeout`` bounds each read and, through the service client's
    ``deadline_transport``, each answer as a whole.  ``verify`` is ``True``
    (certifi's authorities) or the path of a CA bundle (``--ca-bundle``: an
    identity provider behind a company's own authority).  ``transport``
    replaces the network (a test's ASGI app or respx router).  ``ConfigError``
    for a token that cannot be sent in a header; no message names the token.
    """
    base = scim_base_url(url)
    check_token(token, what="The SCIM token", env_name=TOKEN_ENV)
    return httpx.Client(
        base_url=base,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/scim+json, application/json",
                 "User-Agent": USER_AGENT},
        transport=transport if transport is not None else deadline_transport(verify=verify),
        timeout=httpx.Timeout(timeout, connect=connect_timeout),
        follow_redirects=False,
    )


class ScimReader:
    """Lists a SCIM service's Users and Groups through one ``httpx.Client``
    (see ``scim_http_client``), rate-limited and retried by the service
    client's ``Requester``: ``rate_limits`` per minute, at most
    ``max_attempts`` requests per page, every wait on ``clock``."""

    def __init__(self, http: httpx.Client, *, clock: Clock | None = None, rate_limits: RateLimits = RateLimits(),
                 max_attempts: int = 4, page_size: int = DEFAULT_PAGE_SIZE, max_resources: int = MAX_RESOURCES,
                 max_pages: int = MAX_PAGES, rng: random.Random | None = None) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.requester = Requester(http, clock=clock, rate_limits=rate_limits, max_attempts=max_attempts, rng=rng)
        self.base = str(http.base_url).rstrip("/")
        self.page_size = page_size
        self.max_resources = max_resources
        self.max_pages = max_pages

    def read_all(self) -> ScimResources:
        """Every User, then every Group; ``DirectoryPullError`` when either cannot be read whole."""
        return ScimResources(users=self.list_resources(USERS), groups=self.list_resources(GROUPS))

    def list_resources(self, endpoint: str) -> tuple[JsonObject, ...]:
        """Every resource of ``endpoint`` (``/Users``, ``/Groups``), page by page."""
        found: list[JsonObject] = []
        seen: set[str] = set()
        start = 1
        for _ in range(self.max_pages):
            call = f"GET {endpoint}?startIndex={start}&count={self.page_size}"
            total, resources = self._page(endpoint, start, call)
            if total > self.max_resources:
                raise self._refused(call, f"it announces totalResults {total:,}, more than the "
                                          f"{self.max_resources:,} resources reconciler reads of one listing")
            if not resources:
                if start > total:  # an empty directory (or one that shrank while it was read)
                    return tuple(found)
                raise self._refused(call, f"it announces totalResults {total:,} but sends no resource from "
                                          f"startIndex {start:,} on")
            for resource in resources:
                if resource["id"] in seen:
                    raise self._refused(call, f"it sends {_kind(endpoint)} id {_quoted(resource['id'])} again, "
                                              "already received on an earlier page: the service ignores startIndex, "
                                              "or the directory changed while it was read (run the pull again)")
                seen.add(resource["id"])
            found.extend(resources)
            if len(found) > self.max_resources:
                raise self._refused(call, f"it has sent more than the {self.max_resources:,} resources reconciler "
                                          "reads of one listing")
            start += len(resources)
            if start > total:
                return tuple(found)
        raise self._refused(f"GET {endpoint}?startIndex={start}&count={self.page_size}",
                            f"after {plural(self.max_pages, 'page')} ({len(found):,} resources) it still announces "
                            "more, past the number of pages reconciler reads of one listing")

    def _page(self, endpoint: str, start: int, call: str) -> tuple[int, list[JsonObject]]:
        """One page: its ``totalResults`` and its resources, each checked to be a JSON object with an id."""
        try:
            body = self.requester.request("GET", endpoint, query=[("startIndex", str(start)),
                                                                  ("count", str(self.page_size))]).body
        except ApiError as exc:
            raise _pull_error(exc, self.base, call) from exc
        total = body.get("totalResults")
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            schemas = body.get("schemas")
            what = ("a ListResponse without a whole number as totalResults"
                    if isinstance(schemas, list) and LIST_RESPONSE in schemas
                    else f"a JSON object that is no SCIM ListResponse (its keys: {_keys(body)})")
            raise self._not_scim(call, what)
        resources = body.get("Resources", [])
        if not isinstance(resources, list):
            raise self._not_scim(call, f"a ListResponse whose Resources is not a list but {type(resources).__name__}")
        for position, resource in enumerate(resources, start=1):
            if not isinstance(resource, Mapping) or not isinstance(resource.get("id"), str) or not resource["id"]:
                raise self._not_scim(call, f"a ListResponse whose resource number {position} of the page is not a "
                                           "SCIM resource with an id")
        return total, [dict(resource) for resource in resources]

    def _refused(self, call: str, problem: str) -> DirectoryPullError:
        return DirectoryPullError(f"The pages of the SCIM service at {self.base} do not add up, so the pull was "
                                  f"stopped at {call}: {problem}. No listing was used: a partial one would make the "
                                  "people left out leavers.")

    def _not_scim(self, call: str, what: str) -> DirectoryPullError:
        return DirectoryPullError(f"The answer of the SCIM service at {self.base} to {call} is {what}. The address may "
                                  "not be a SCIM base URL (the part before /Users, often ending in /scim/v2).")


def _pull_error(exc: ApiError, base: str, call: str) -> DirectoryPullError:
    """``exc`` (from the service client's requester) as one paragraph about the SCIM service and ``call``."""
    at = f"the SCIM service at {base}"
    tried = f" ({exc.attempts} attempts)" if exc.attempts > 1 else ""
    if isinstance(exc, AnswerTooSlow):
        return DirectoryPullError(f"The answer of {at} to {call} was not complete in time: {exc.message}. It was not "
                                  "asked again; try again later.")
    if isinstance(exc, UnverifiedCertificate):
        return DirectoryPullError(f"No secure connection to {at} for {call}: {exc.message}.")
    if isinstance(exc, ConnectionFailed):
        return DirectoryPullError(f"No answer from {at} to {call}{tried}: {exc.message}. Check the address and the "
                                  "network.")
    if isinstance(exc, WaitTooLong):
        return DirectoryPullError(f"{at[0].upper()}{at[1:]} asked reconciler to wait before {call} for longer than it "
                                  f"ever waits: {exc.message}. Nothing was waited; try again later.")
    if isinstance(exc, ResponseTooLarge):
        return DirectoryPullError(f"The answer of {at} to {call} is too large: {exc.message}.")
    if isinstance(exc, InvalidResponse):
        return DirectoryPullError(f"The answer of {at} to {call} is not SCIM: {exc.message}. The address may not be a "
                                  "SCIM base URL (the part before /Users, often ending in /scim/v2).")
    hint = {
        Unauthorized: f"The token was refused: check {TOKEN_ENV} or the file given with --token-file (it is "
                      "missing, wrong or no longer valid).",
        Forbidden: "The token may not read Users and Groups: give its application read access in the identity "
                   "provider.",
        NotFound: "The address may not be the SCIM base URL (the part before /Users, often ending in /scim/v2).",
        RateLimited: f"The service still limited the rate after {exc.attempts} attempts; try again later.",
        ServerError: f"The service failed{f' after {exc.attempts} attempts' if exc.attempts > 1 else ''}; try "
                     "again later.",
    }.get(type(exc), "SCIM does not answer a listing so.")
    return DirectoryPullError(f"{at[0].upper()}{at[1:]} answered {exc.status} to {call}: {_detail(exc.message)}. "
                              f"{hint}")


# How the service client's requester quotes an error body that is not its service's envelope.
_NOT_ENVELOPE = re.compile(r"^\(the answer is not the documented error envelope; it begins: (?P<body>.*)\)$", re.S)


def _detail(message: str) -> str:
    """What the error body says, for a message: a SCIM error (RFC 7644 §3.12) is not the service
    client's envelope, so the requester's words for that are replaced by the body itself."""
    found = _NOT_ENVELOPE.match(message)
    return f"its body begins: {found['body']}" if found else message.rstrip(".")


def _kind(endpoint: str) -> str:
    return "user" if endpoint == USERS else "group"


def _keys(body: Mapping[str, Any]) -> str:
    return ", ".join(_quoted(key) for key in list(body)[:8]) + (", ..." if len(body) > 8 else "") or "none"


def _quoted(text: object) -> str:
    return repr(printable(shortened(str(text), 60)))


def _shown(url: str) -> str:
    """``url`` for a message: without a user name or password in it."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return repr(printable(shortened(urlunsplit(parts), 120)))
