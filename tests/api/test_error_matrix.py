"""Every endpoint, every documented error status: the same exception, the call named.

The description says every endpoint can return the statuses of its Errors
table.  For each endpoint of the client and each of those statuses this
checks the exception class, status, code and call carried, and how often the
call was sent: a 429 is waited out and sent again up to the attempt limit on
every endpoint; a 500 is sent again only where repeating is harmless (reads,
PATCHes, the access-list replacement), never for a creation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.bodies import ConnectExisting, LinkAssetInput
from reconciler.api.client import WorkspaceClient
from reconciler.api.models import AccessUserInput
from tests.api.conftest import DOCUMENTED_ERRORS, error

MAX_ATTEMPTS = 4  # the client's default

# (method, path, the client call, whether a 5xx is retried)
ENDPOINTS: list[tuple[str, str, Callable[[WorkspaceClient], Any], bool]] = [
    ("GET", "/workspaces", lambda c: list(c.list_workspaces()), True),
    ("POST", "/workspaces/ws_1/access",
     lambda c: c.set_access("ws_1", users=[AccessUserInput(email="jane@acme.com", role="owner")]), True),
    ("POST", "/workspaces/ws_1/connected-workspaces",
     lambda c: c.connect_workspace("ws_1", ConnectExisting(workspaceId="ws_2")), False),
    ("POST", "/workspaces/ws_1/authenticated-embed-url",
     lambda c: c.authenticated_embed_url("ws_1", email="jane@acme.com"), False),
    ("PATCH", "/workspace-users/wu_1", lambda c: c.update_workspace_user("wu_1", role="editor"), True),
    ("PATCH", "/workspace-domains/wd_1", lambda c: c.update_workspace_domain("wd_1", role="viewer"), True),
    ("GET", "/workspace-domains", lambda c: list(c.list_workspace_domains()), True),
    ("PATCH", "/workspace-plan-tasks/task_1", lambda c: c.update_workspace_plan_task("task_1", completed=True), True),
    ("PATCH", "/workspace-sections/sec_1", lambda c: c.update_workspace_section("sec_1", is_hidden=True), True),
    ("PATCH", "/workspace-pages/pg_1", lambda c: c.update_workspace_page("pg_1", is_hidden=False), True),
    ("POST", "/files", lambda c: c.create_file("deck.pdf", "application/pdf"), False),
    ("POST", "/assets", lambda c: c.create_asset(LinkAssetInput(type="link", name="Site", url="https://acme.com")),
     False),
    ("PATCH", "/assets/asset_1", lambda c: c.update_asset("asset_1", name="Renamed"), True),
    ("GET", "/files/file_1", lambda c: c.get_file("file_1"), True),
    ("POST", "/tags", lambda c: c.create_tag("pricing"), False),
    ("GET", "/users", lambda c: list(c.list_users()), True),
    ("GET", "/custom-fields/cf_1", lambda c: c.get_custom_field("cf_1"), True),
    ("GET", "/custom-fields", lambda c: list(c.list_custom_fields(object_type="account")), True),
    ("GET", "/accounts", lambda c: list(c.list_accounts()), True),
]

STATUSES = DOCUMENTED_ERRORS


def _expected_sends(status: int, retried_on_5xx: bool) -> int:
    if status == 429 or (status == 500 and retried_on_5xx):
        return MAX_ATTEMPTS
    return 1


@pytest.mark.parametrize(("status", "code", "cls"), STATUSES, ids=[str(s) for s, _, _ in STATUSES])
@pytest.mark.parametrize(("method", "path", "call", "retried"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _, _ in ENDPOINTS])
def test_each_error_status_of_each_endpoint_raises_its_exception_naming_the_call(
    router: respx.Router, client: WorkspaceClient, method: str, path: str,
    call: Callable[[WorkspaceClient], Any], retried: bool, status: int, code: str, cls: type[errors.ApiError],
) -> None:
    route = router.route(method=method, path=path).respond(
        status, json=error(code, f"{code.lower()} from the service"), headers={"Retry-After": "1"})
    with pytest.raises(cls) as info:
        call(client)
    exc = info.value
    assert (exc.status, exc.code, exc.method, exc.path) == (status, code, method, path)
    assert exc.message == f"{code.lower()} from the service"
    assert f"{method} {path}" in str(exc) and exc.message in str(exc)
    assert route.call_count == _expected_sends(status, retried)


@pytest.mark.parametrize(("method", "path", "call", "retried"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _, _ in ENDPOINTS])
def test_a_dropped_connection_is_sent_again_only_where_repeating_is_harmless(
    router: respx.Router, client: WorkspaceClient, method: str, path: str,
    call: Callable[[WorkspaceClient], Any], retried: bool,
) -> None:
    route = router.route(method=method, path=path).mock(side_effect=httpx.RemoteProtocolError("hung up"))
    with pytest.raises(errors.ConnectionFailed) as info:
        call(client)
    assert (info.value.status, info.value.method, info.value.path) == (None, method, path)
    assert route.call_count == (MAX_ATTEMPTS if retried else 1)
    assert isinstance(info.value.__cause__, httpx.RemoteProtocolError)
