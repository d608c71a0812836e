from __future__ import annotations

import random
import ssl

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.api.models import AccessUserInput
from reconciler.errors import ReconcilerError
from reconciler.clock import VirtualClock
from tests.api.conftest import BASE, DOCUMENTED_ERRORS, TOKEN, MakeClient, error


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [*DOCUMENTED_ERRORS, (418, "TEAPOT", errors.UnexpectedStatus)],
)
def test_error_status_becomes_its_exception_with_the_call(
    router: respx.Router, client: WorkspaceClient, status: int, code: str, cls: type[errors.ApiError]
) -> None:
    route = router.patch("/workspace-users/wu_1").respond(
        status, json=error(code, "Workspace user not found"), headers={"Retry-After": "1"}
    )
    with pytest.raises(cls) as info:
        client.update_workspace_user("wu_1", role="editor", properties=["role"])
    exc = info.value
    assert isinstance(exc, errors.ApiError) and isinstance(exc, ReconcilerError)
    assert (exc.status, exc.code, exc.method, exc.path) == (status, code, "PATCH", "/workspace-users/wu_1")
    assert exc.message == "Workspace user not found"
    assert str(exc).startswith(f"The service answered {status} {code} to PATCH /workspace-users/wu_1: "
                               "Workspace user not found.")
    assert "\n" not in str(exc)
    assert TOKEN not in str(exc) and TOKEN not in repr(exc)
    # 429 and 5xx on a PATCH are retried until max_attempts; the rest are not.
    assert route.call_count == (4 if status in (429, 500) else 1)


def test_unauthorized_names_the_token_settings(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(401, json=error("UNAUTHORIZED", "Invalid token"))
    with pytest.raises(errors.Unauthorized, match="RECONCILER_TOKEN or in the file given with --token-file"):
        list(client.list_workspaces())


def test_rate_limited_after_retries_says_how_many_attempts(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/workspaces").respond(429, json=error("RATE_LIMIT_EXCEEDED", "Slow down"),
                                             headers={"Retry-After": "5"})
    with pytest.raises(errors.RateLimited, match="after 4 attempts") as info:
        list(client.list_workspaces())
    assert info.value.attempts == 4
    assert route.call_count == 4
    assert client.stats.rate_limited == 4


def test_error_body_echoing_the_token_is_redacted(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(401, json=error("UNAUTHORIZED", f"Token {TOKEN} is not valid"))
    with pytest.raises(errors.Unauthorized) as info:
        list(client.list_workspaces())
    assert TOKEN not in str(info.value) and "[token]" in str(info.value)


def test_error_body_that_is_not_the_envelope_still_gives_its_status(
    router: respx.Router, client: WorkspaceClient
) -> None:
    router.patch("/workspace-domains/wd_1").respond(404, text="<html>Not here</html>")
    with pytest.raises(errors.NotFound) as info:
        client.update_workspace_domain("wd_1", role="viewer")
    assert info.value.code is None
    assert "not the documented error envelope" in str(info.value)
    assert "<html>Not here</html>" in str(info.value)


def test_non_json_success_body_is_invalid_response(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-users/wu_1").respond(200, text="<html>proxy login</html>")
    with pytest.raises(errors.InvalidResponse, match="not JSON") as info:
        client.update_workspace_user("wu_1", role="viewer")
    assert (info.value.status, info.value.method, info.value.path) == (200, "PATCH", "/workspace-users/wu_1")
    assert route.call_count == 1


def test_success_body_without_the_resource_is_invalid_response(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-users/wu_1").respond(200, json={"data": {"something": {}}})
    with pytest.raises(errors.InvalidResponse, match="'data' has no 'workspaceUser'"):
        client.update_workspace_user("wu_1", role="viewer")


def test_resource_of_the_wrong_shape_is_invalid_response(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-users/wu_1").respond(200, json={"data": {"workspaceUser": {"role": "viewer"}}})
    with pytest.raises(errors.InvalidResponse, match="WorkspaceUser did not have the documented shape"):
        client.update_workspace_user("wu_1", role="viewer")


def test_error_path_has_no_query_string(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspace-domains").respond(403, json=error("FORBIDDEN", "No"))
    with pytest.raises(errors.Forbidden) as info:
        list(client.list_workspace_domains(properties=["domain"], filter={"role": "owner"}))
    assert info.value.path == "/workspace-domains"


def test_connection_failure_on_creation_says_change_may_have_been_made(make_client: MakeClient,
                                                                       router: respx.Router) -> None:
    # No creation endpoint exists in phase 1's client, so the requester is used directly.
    client = make_client()
    route = router.post("/tags").mock(side_effect=httpx.ConnectError)
    with pytest.raises(errors.ConnectionFailed) as info:
        client.requester.request("POST", "/tags", body={"title": "x"})
    assert route.call_count == 1
    assert info.value.status is None
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    assert str(info.value).startswith("No answer from the service to POST /tags:")
    assert "may or may not have been made" in str(info.value)
    assert "nothing is created twice" in str(info.value)


def test_list_that_is_not_a_list_is_invalid_response(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json={"data": {"workspaces": {"id": "ws_1"}, "pageInfo": {}}})
    with pytest.raises(errors.InvalidResponse, match="'data.workspaces' is not a list"):
        list(client.list_workspaces())


def test_json_that_is_not_an_object_is_invalid_response(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-users/wu_1").respond(200, json=["not", "an", "object"])
    with pytest.raises(errors.InvalidResponse, match="not an object"):
        client.update_workspace_user("wu_1", role="viewer")


def test_error_without_body_still_names_the_call(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(503)
    with pytest.raises(errors.ServerError, match=r"^The service answered 503 to GET /workspaces: \(the answer had "
                                                 r"no body\)\. The service failed after 4 attempts"):
        list(client.list_workspaces())


def test_a_listed_item_of_the_wrong_shape_is_invalid_response_naming_the_field_not_its_index(
        router: respx.Router, client: WorkspaceClient) -> None:
    """A page's items are validated in one call (issue 40); the message stays the one item's message."""
    router.get("/workspaces").respond(200, json={"data": {
        "workspaces": [{"id": "ws_1", "name": "One"}, {"id": "ws_2", "name": "Two", "totalViews": "many"}],
        "pageInfo": {"page": 1, "pages": 1, "total": 2, "hasNextPage": False}}})
    with pytest.raises(errors.InvalidResponse) as info:
        list(client.list_workspaces())
    assert "a Workspace did not have the documented shape (totalViews: Input should be a valid number" in str(
        info.value), info.value



class _Service:
    """A transport answering POST /v1/workspaces/ws_1/access with ``answers`` in turn: a status, or "untrusted"
    for the connection httpx refuses when the service's certificate cannot be verified (its ConnectError
    raised from the ssl error, as httpx raises it: respx would replace that cause)."""

    def __init__(self, *answers: int | str) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        answer = self.answers.pop(0)
        if answer == "untrusted":
            cause = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
            cause.verify_message = "unable to get local issuer certificate"
            raise httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed") from cause
        return httpx.Response(int(answer), request=request)


def _set_access(service: _Service, clock: VirtualClock) -> errors.UnverifiedCertificate:
    client = WorkspaceClient(make_http_client(BASE, TOKEN, transport=httpx.MockTransport(service)), clock=clock,
                             rng=random.Random(7))
    with pytest.raises(errors.UnverifiedCertificate) as refused:
        client.set_access("ws_1", users=[AccessUserInput(email="a@acme.com", role="owner")])
    return refused.value


def test_an_untrusted_certificate_is_not_sent_again_and_says_nothing_was_changed() -> None:
    """The call never left this machine: one attempt, and no word of a change that may have been made."""
    service = _Service("untrusted", 200)
    refused = _set_access(service, VirtualClock())
    assert service.calls == 1
    assert str(refused) == (
        "No secure connection to the service for POST /workspaces/ws_1/access: its TLS certificate could not be "
        "verified (unable to get local issuer certificate). If a private certificate authority (a company's own) "
        "signed it, give that authority's certificate (PEM) with --ca-bundle FILE; verification cannot be turned "
        "off.")


def test_an_untrusted_certificate_after_an_attempt_that_may_have_reached_the_service_says_so() -> None:
    service = _Service(503, "untrusted")
    refused = _set_access(service, VirtualClock())
    assert service.calls == 2
    assert str(refused).endswith("The change may or may not have been made; repeating the call is safe.")
