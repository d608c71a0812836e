"""The SCIM 2.0 service provider an identity provider pushes people and groups to (``directory serve``).

Built on scim2-server (the python-scim family): it validates resources with scim2-models, evaluates
filters, sorting and paging, applies PUT and PATCH (add, remove, replace, ``members`` and ``active``
included), checks ``If-Match`` and answers every error with a SCIM error body (RFC 7644 §3.12). This
module only configures it:

- the base path ``/scim/v2``; Users (with the enterprise extension, so ``manager`` is kept), Groups,
  ServiceProviderConfig, Schemas and ResourceTypes; no bulk, no password change;
- a bearer token on every request, compared in constant time (``hmac.compare_digest``): without it, or
  with another one, a 401 SCIM error; the token is never logged (uvicorn logs the request line only);
- a bound on a request's body (``max_body_bytes``): a larger one is a 413 SCIM error, read no further;
- a PATCH, PUT or DELETE that loses a version race against another writer (between reading the resource
  and writing it back) and carries no ``If-Match`` of the client is tried again on the resource as it is
  now, up to ``RACE_RETRIES`` times: two identity-provider workers adding members to one group both
  succeed and no member is lost. A client's own ``If-Match`` that no longer matches is its 412.

The resources live in the state backend (``store``, ``store_scim``).
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, TypeVar, cast

from scim2_models import (
    AuthenticationScheme,
    Bulk,
    ChangePassword,
    ETag,
    External,
    Filter,
    Patch,
    PatchOp,
    PayloadTooLargeException,
    PreconditionFailedException,
    Reference,
    Resource,
    ResourceType,
    SCIMException,
    ScimProvider,
    ServiceProviderConfig,
    Sort,
    UnauthorizedException,
)
from scim2_server.applications.asgi import ASGIApplication, Receive, Scope, Send
from scim2_server.conditions import Conditions
from scim2_server.handler import AsyncScimHandler
from scim2_server.requests import ScimRequest
from scim2_server.responses import ScimResponse
from scim2_server.service import ScimService
from scim2_server.utils import load_default_resource_types, load_default_schemas

from reconciler.directory.server_compat import entra_compatible
from reconciler.directory.store import DirectoryStore
from reconciler.directory.store_scim import AsyncDirectoryScimStorage, DirectoryScimStorage
from reconciler.errors import ReconcilerError

__all__ = ["BASE_PATH", "DEFAULT_MAX_BODY_BYTES", "MAX_RESULTS", "RACE_RETRIES", "directory_app"]

BASE_PATH = "/scim"  # + scim2-server's /v2: the base URL an identity provider is given ends in /scim/v2
# 1 MiB: a group PATCH adding 10,000 members (Okta and Entra send at most a few hundred per request)
# is about 0.6 MiB.
DEFAULT_MAX_BODY_BYTES = 2**20
MAX_RESULTS = 1000  # the largest page a search returns (ServiceProviderConfig filter.maxResults)
# How often a write that lost a version race to another writer is tried again: each loss means another
# write succeeded, so this bounds only how many writers may pile onto one resource at once.
T = TypeVar("T")
RACE_RETRIES = 100

LOG = logging.getLogger("reconciler.directory")

BEARER = AuthenticationScheme(
    type=AuthenticationScheme.Type.oauthbearertoken, name="OAuth Bearer Token", primary=True,
    description="A long-lived bearer token (Authorization: Bearer TOKEN), given to directory serve by "
                "--token-file or RECONCILER_DIRECTORY_TOKEN.",
    spec_uri=Reference[External]("https://www.rfc-editor.org/rfc/rfc6750"))


def service_provider_config() -> ServiceProviderConfig:
    """What ``/ServiceProviderConfig`` announces: what the storage and this module support."""
    return ServiceProviderConfig(
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=MAX_RESULTS),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=True),
        etag=ETag(supported=True),
        authentication_schemes=[BEARER],
    )


def directory_provider() -> ScimProvider:
    """RFC 7643's User (with the enterprise extension) and Group, and the configuration above."""
    return ScimProvider.from_discovery(load_default_schemas().values(), load_default_resource_types().values(),
                                       config=service_provider_config())


class RetryingHandler(AsyncScimHandler):
    """scim2-server's handler, a write without the client's ``If-Match`` tried again when it loses a race."""

    async def replace_resource(self, resource_type: ResourceType, current: Resource[Any],
                               replacement: Resource[Any], conditions: Conditions) -> Resource[Any]:
        read = [current]  # a PUT is applied to the resource as it is now: read again after each lost race

        async def write() -> Resource[Any]:
            return await AsyncScimHandler.replace_resource(self, resource_type, read[0], replacement, conditions)

        async def reread() -> None:
            read[0] = await self.storage.get(resource_type, cast(str, current.id))

        return await _until_won(write, conditions, before_again=reread)

    async def patch_resource(self, resource_type: ResourceType, resource_id: str, patch_op: PatchOp[Any],
                             conditions: Conditions) -> Resource[Any]:
        return await _until_won(lambda: AsyncScimHandler.patch_resource(
            self, resource_type, resource_id, patch_op, conditions), conditions)

    async def delete_resource(self, resource_type: ResourceType, resource_id: str, conditions: Conditions) -> None:
        await _until_won(lambda: AsyncScimHandler.delete_resource(self, resource_type, resource_id, conditions),
                         conditions)


async def _until_won(write: Callable[[], Awaitable[T]], conditions: Conditions, *,
                     before_again: Callable[[], Awaitable[None]] | None = None) -> T:
    """``write()``, tried again (up to ``RACE_RETRIES`` times) while another write wins the race for its
    version; a client's own ``If-Match`` that no longer holds stays its 412."""
    for attempt in range(RACE_RETRIES + 1):
        try:
            return await write()
        except PreconditionFailedException:
            if conditions.if_match is not None or attempt == RACE_RETRIES:
                raise
        if before_again is not None:
            await before_again()
    raise AssertionError("unreachable: the last attempt returns or raises")


class BodyLimitedService(ScimService):
    """scim2-server's service with one bound on every request's body (it bounds only bulk bodies)."""

    def __init__(self, provider: ScimProvider, *, max_body_bytes: int) -> None:
        # The secret seals RFC 9865 cursors, which this configuration does not announce; one per process.
        super().__init__(provider, secret=secrets.token_urlsafe(32))
        self.max_body_bytes = max_body_bytes

    def max_body_size(self, request: ScimRequest) -> int | None:
        return self.max_body_bytes


class DirectoryApplication(ASGIApplication):
    """The ASGI application (the module's docstring)."""

    def __init__(self, store: DirectoryStore, token: str, *, max_body_bytes: int) -> None:
        if not token:
            raise ValueError("directory_app needs a token: an empty one would let anyone in")
        provider = directory_provider()
        storage = AsyncDirectoryScimStorage(DirectoryScimStorage(store, provider))
        super().__init__(storage, provider, BodyLimitedService(provider, max_body_bytes=max_body_bytes))
        self.handler = RetryingHandler(self.service, storage)
        self.max_body_bytes = max_body_bytes
        self._token = token.encode("utf-8")
        self.log = LOG

    def check_auth(self, request: ScimRequest) -> None:
        scheme, _, given = (request.header("Authorization") or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode("utf-8"), self._token):
            raise UnauthorizedException(detail="A valid bearer token is required (Authorization: Bearer TOKEN).")

    async def dispatch_request(self, request: ScimRequest) -> ScimResponse:
        # Every path under the base, the unknown ones and ServiceProviderConfig included (scim2-server lets
        # that one through): without the token nothing is told, not even which paths exist.
        self.check_auth(request)
        if len(request.body) > self.max_body_bytes:
            raise PayloadTooLargeException(detail=f"The request body is over {self.max_body_bytes:,} bytes, the "
                                                  "most this service reads; nothing was stored.")
        request.body = entra_compatible(request.method, request.body)
        request.subject = self.get_subject(request)
        return await self.handler.handle(request)

    def handle_exception(self, request: ScimRequest, exception: Exception) -> ScimResponse:
        if isinstance(exception, ReconcilerError):
            # The store could not be read or written (a full disk, a lost database): its own one-paragraph
            # message, logged for the operator; the client gets a 503 and its identity provider retries.
            LOG.error("%s %s: %s", request.method, request.path, exception)
            return self.service.error_response(_Unavailable(
                detail="The directory's storage is unavailable; nothing was stored. Try again later."))
        if isinstance(exception, SCIMException):
            LOG.info("%s %s: %s %s", request.method, request.path, exception.status, exception)
            return self.service.error_response(exception)
        return super().handle_exception(request, exception)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            root = scope.get("root_path", "")
            inner = path.removeprefix(root) if root else path
            if inner != BASE_PATH and not inner.startswith(BASE_PATH + "/"):
                await self.send_response(self.finalize_response(
                    ScimRequest(method=scope["method"], base_url="", path=path),
                    self.service.error_response(_NotHere())), send)
                return
            scope = {**scope, "root_path": root + BASE_PATH}
        await super().__call__(scope, receive, send)


class _Unavailable(SCIMException):
    status = int(HTTPStatus.SERVICE_UNAVAILABLE)
    _default_detail = "The directory's storage is unavailable"


class _NotHere(SCIMException):
    status = int(HTTPStatus.NOT_FOUND)
    _default_detail = f"Not found: the SCIM endpoints are under {BASE_PATH}/v2"


def directory_app(store: DirectoryStore, token: str, *,
                  max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> DirectoryApplication:
    """The SCIM service provider over ``store``, for ``token``: an ASGI application (module docstring)."""
    return DirectoryApplication(store, token, max_body_bytes=max_body_bytes)


def background_server(app: DirectoryApplication, *, host: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Serve ``app`` on a free port in a daemon thread (tests, the demo), believing the forwarded headers of
    127.0.0.1 only, as ``directory serve`` does by default; returns (``http://HOST:PORT``, stop)."""
    from reconciler.serving import background_server as serve_in_background

    return serve_in_background(app, what="directory server", host=host, forwarded_allow_ips="127.0.0.1")


def serve(app: DirectoryApplication, *, host: str, port: int, forwarded_allow_ips: str,
          ready: Callable[[str], None]) -> None:
    """Serve ``app`` until interrupted (``directory serve``); ``ready(http://HOST:PORT)`` once listening."""
    from reconciler.serving import serve as serve_app

    serve_app(app, host=host, port=port, what="directory server", forwarded_allow_ips=forwarded_allow_ips,
              ready=ready)
