"""Workspaces, their groups and their access lists."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from reconciler.api import properties as props
from reconciler.api.bodies import ConnectExisting, CreateFromTemplate
from reconciler.api.endpoints.base import EndpointBase, filter_query, segment
from reconciler.api.models import (
    AccessDomainInput,
    AccessUserInput,
    ConnectResult,
    ListedWorkspace,
    Workspace,
    WorkspaceDomain,
    WorkspaceUser,
)
from reconciler.api.properties import properties_query
from reconciler.vocabulary import Role
from reconciler.api.responses import BodyError, JsonObject, unwrap


class WorkspaceEndpoints(EndpointBase):
    def list_workspaces(self, *, properties: Sequence[str] = ()) -> Iterator[Workspace]:
        """Every workspace of the company, page by page (GET /workspaces).

        The description references this endpoint without showing its shape;
        it is taken to be like the other lists, ``{data: {workspaces: [...],
        pageInfo}}``, and to accept the workspace ``properties`` of the
        access endpoint.
        """
        query = properties_query(properties, props.WORKSPACE, endpoint="GET /workspaces")
        return self._pages("/workspaces", "workspaces", Workspace, query)

    def list_workspace_access(self, *, properties: Sequence[str] = ()) -> Iterator[ListedWorkspace]:
        """As :meth:`list_workspaces`, each workspace as the plain dict ``ListedWorkspace`` (who has which
        role, and the fields the plan reads), each page parsed and checked from its bytes in one call."""
        query = properties_query(properties, props.WORKSPACE, endpoint="GET /workspaces")
        return self._listed("/workspaces", "workspaces", ListedWorkspace, query)

    def set_access(
        self,
        workspace_id: str,
        *,
        users: Sequence[AccessUserInput] | None = None,
        domains: Sequence[AccessDomainInput] | None = None,
        notify_people: bool | None = None,
        message: str | None = None,
        properties: Sequence[str] = (),
    ) -> Workspace:
        """Replace who may access a workspace (POST /workspaces/{id}/access).

        Only the keys given are sent: a list that is given replaces the whole
        list in the service (entries left out lose access), a list that is
        ``None`` is left as it is.  At least one of ``users`` and ``domains``
        must be given.  Safe to repeat, so retried after 5xx and lost
        connections; a repeat never notifies (``notifyPeople: false``).
        """
        if users is None and domains is None:
            raise ValueError("set_access needs users or domains (or both): the body would be empty")
        body: JsonObject = {}
        if users is not None:
            body["workspaceUsers"] = [u.model_dump() for u in users]
        if domains is not None:
            body["workspaceDomains"] = [d.model_dump() for d in domains]
        if notify_people is not None:
            body["notifyPeople"] = notify_people
        if message is not None:
            body["message"] = message
        path = f"/workspaces/{segment(workspace_id)}/access"
        query = properties_query(properties, props.WORKSPACE, endpoint="POST /workspaces/{id}/access")
        # A repeat (after a lost answer or a 429) must not email people twice:
        # it replays the list with notifyPeople false.  Someone may then miss
        # the email if the first attempt never arrived; nobody gets two.
        replay = None
        if notify_people:
            replay = {k: v for k, v in body.items() if k != "message"} | {"notifyPeople": False}
        answer = self.requester.request("POST", path, query=query, body=body, replay_body=replay)
        return self._read(answer, "POST", path, "workspace", Workspace)

    def connect_workspace(
        self,
        group_workspace_id: str,
        connection: ConnectExisting | CreateFromTemplate,
        *,
        properties: Sequence[str] = (),
    ) -> ConnectResult:
        """Connect a workspace to the group of ``group_workspace_id``, or
        create one there from a template (POST /workspaces/{id}/connected-workspaces).

        ``ConnectResult.already_connected`` tells a 200 (already in the group,
        nothing changed) from a 201.  Never repeated after a 5xx or a lost
        connection: creating from a template uses a workspace credit, so the
        caller must look for what was created first.  Limited to 30 calls a
        minute with workspace creation.
        """
        path = f"/workspaces/{segment(group_workspace_id)}/connected-workspaces"
        query = properties_query(properties, props.WORKSPACE,
                                 endpoint="POST /workspaces/{id}/connected-workspaces")
        answer = self.requester.request("POST", path, query=query, body=connection.wire())
        workspace = self._read(answer, "POST", path, "workspace", Workspace)
        return ConnectResult(workspace=workspace, already_connected=answer.status == 200)

    def authenticated_embed_url(self, workspace_id: str, *, email: str) -> str:
        """An address that opens the workspace as the user ``email``
        (POST /workspaces/{id}/authenticated-embed-url).

        The address carries its own token and is valid for two minutes after
        it is made: hand it on at once and do not log it.
        """
        if not email:
            raise ValueError("authenticated_embed_url needs the user's email")
        path = f"/workspaces/{segment(workspace_id)}/authenticated-embed-url"
        answer = self.requester.request("POST", path, body={"email": email})
        try:
            url = unwrap(answer.body, "url")
            if not isinstance(url, str) or not url:
                raise BodyError("'data.url' is not a non-empty string")
        except BodyError as exc:
            raise self.requester.invalid("POST", path, str(exc), status=answer.status) from None
        return url

    def update_workspace_user(
        self, workspace_user_id: str, *, role: Role, properties: Sequence[str] = ()
    ) -> WorkspaceUser:
        """Change the role of one user on an access list (PATCH /workspace-users/{id})."""
        path = f"/workspace-users/{segment(workspace_user_id)}"
        query = properties_query(properties, props.WORKSPACE_USER, endpoint="PATCH /workspace-users/{id}")
        return self._one("PATCH", path, "workspaceUser", WorkspaceUser, query=query, body={"role": role})

    def update_workspace_domain(
        self, workspace_domain_id: str, *, role: Role, properties: Sequence[str] = ()
    ) -> WorkspaceDomain:
        """Change the role of one domain on an access list (PATCH /workspace-domains/{id})."""
        path = f"/workspace-domains/{segment(workspace_domain_id)}"
        query = properties_query(properties, props.WORKSPACE_DOMAIN, endpoint="PATCH /workspace-domains/{id}")
        return self._one("PATCH", path, "workspaceDomain", WorkspaceDomain, query=query, body={"role": role})

    def list_workspace_domains(
        self, *, properties: Sequence[str] = (), filter: Mapping[str, str] | None = None
    ) -> Iterator[WorkspaceDomain]:
        """Every workspace domain entry, page by page (GET /workspace-domains).

        ``filter`` is sent as ``filter[key]=value`` (its attributes and
        encoding are not shown).
        """
        query = [
            *properties_query(properties, props.WORKSPACE_DOMAIN, endpoint="GET /workspace-domains"),
            *filter_query(filter),
        ]
        return self._pages("/workspace-domains", "workspaceDomains", WorkspaceDomain, query)
