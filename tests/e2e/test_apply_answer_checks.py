"""What apply sends to write a list, and what it checks in the answer: the
sides it sent (users, domains) must come back as sent, or the apply stops
(Terraform's "inconsistent result"); a side it did not send is the list's own
and is not compared, since an earlier change of the same plan may have
changed it (two workspaces sharing one list).  A creation whose answer shows
another list stops too, with the new workspace recorded (its credit is spent).

The in-process emulator, behind a transport that keeps each body sent and,
where a test says so, drops the last entry of one side of an answer: a service
that reports another list than it was sent.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.errors import ApplyError
from reconciler.plan import Plan
from reconciler.plan.model import AccessChange
from reconciler.state import load_state
from tests.e2e.conftest import TOKEN, EmulatorRig, onboarding_rig

KICKOFF = "group.customer-inc.workspace.kickoff"

Sent = list[tuple[str, str, dict[str, Any]]]


class Service(httpx.BaseTransport):
    """The emulator; each body sent kept in ``sent``; the answer to ``method path`` (whose body has
    ``when``) reports ``side`` (workspaceUsers or workspaceDomains) without its last entry."""

    def __init__(self, emulator: Emulator, *, method: str = "", path: str = "", when: str = "",
                 side: str = "") -> None:
        self.inner, self.method, self.path, self.when, self.side = emulator_transport(emulator), method, path, when, side
        self.sent: Sent = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        if request.method != "GET":
            self.sent.append((request.method, request.url.path, body))
        answer = self.inner.handle_request(request)
        if (request.method, request.url.path) != (self.method, self.path) or self.when not in body:
            return answer
        answer.read()
        doc = json.loads(answer.content)
        doc["data"]["workspace"][self.side] = doc["data"]["workspace"][self.side][:-1]
        headers = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return httpx.Response(answer.status_code, headers=headers, json=doc)


def apply_through(rig: EmulatorRig, service: Service, plan: Plan | None = None) -> None:
    client = WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN, transport=service), clock=rig.clock)
    apply_plan(plan or rig.plan(), client=client, state=load_state(rig.state_path), state_path=rig.state_path)


def test_a_creation_whose_answer_shows_another_list_stops_with_the_new_workspace_recorded(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    service = Service(rig.emulator, method="POST", path="/v1/workspaces/ws_home/connected-workspaces",
                      when="templateId", side="workspaceUsers")
    with pytest.raises(ApplyError) as stopped:
        apply_through(rig, service)
    assert str(stopped.value) == (
        f"{KICKOFF}: the service accepted POST /workspaces/ws_home/connected-workspaces but reports a different list "
        "than was sent: user priya@customer.com was commenter, now absent. This is a bug in the service or in "
        "reconciler; run 'reconciler plan' to see the result.")
    (made,) = [w.id for w in rig.company.workspaces if w.name == "Customer Inc – Kickoff"]
    recorded = load_state(rig.state_path).resources[KICKOFF]
    assert (recorded.id, recorded.connected_to, recorded.template, recorded.name, recorded.intent) == (
        made, "ws_home", "tpl_kickoff", "Customer Inc – Kickoff", None)


SEED = """
companies:
  acme:
    token: dev-token-acme
    verified: true
    plan: paid
    credits: 100
    accounts:
      - {id: acc_1, name: Contoso, crmOneCompanyId: hs-1, crmTwoAccountId: null}
    workspaces:
      - {id: ws_s, name: Contoso – Renewal, account: acc_1, published: true, group: by-hand,
         users: [{email: jane@acme.com, role: owner}]}
      - {id: ws_p, name: Contoso – Renewal (copy), account: acc_1, published: true, group: by-hand,
         users: [{email: jane@acme.com, role: owner}]}
"""

# ws_s and ws_p share one list (connected by hand in the web app): one manifest writes its domains,
# the other (planned after it) its users.
DOMAINS_THEN_USERS = """
version: 1
workspaces:
  a-domains:
    id: ws_p
    access:
      authoritative: false
      domains: [{domain: contoso.com, role: viewer}]
  b-users:
    id: ws_s
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}, {email: new@acme.com, role: viewer}]
"""


def shared_list_rig(tmp_path: Path, clock: VirtualClock, manifest: str) -> EmulatorRig:
    root = tmp_path / "m"
    root.mkdir()
    (root / "m.yaml").write_text(textwrap.dedent(manifest).lstrip(), encoding="utf-8")
    (tmp_path / "seed.yaml").write_text(SEED, encoding="utf-8")
    return EmulatorRig(Emulator.from_seed_file(tmp_path / "seed.yaml", clock=clock), clock, root)


def test_users_written_after_domains_on_one_shared_list_are_checked_without_the_domains_they_did_not_send(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = shared_list_rig(tmp_path, clock, DOMAINS_THEN_USERS)
    plan = rig.plan()
    assert [(c.address, [e.kind for e in c.entries]) for c in plan.changes if isinstance(c, AccessChange)] == [
        ("workspace.a-domains", ["domain"]), ("workspace.b-users", ["user"])]
    assert len(plan.changes) == 2
    service = Service(rig.emulator)

    apply_through(rig, service, plan)
    assert [(path, sorted(body)) for _, path, body in service.sent] == [
        ("/v1/workspaces/ws_p/access", ["notifyPeople", "workspaceDomains"]),
        ("/v1/workspaces/ws_s/access", ["notifyPeople", "workspaceUsers"])]
    assert rig.plan().changes == ()


def test_a_list_whose_answer_shows_other_domains_than_were_sent_stops(tmp_path: Path, clock: VirtualClock) -> None:
    rig = shared_list_rig(tmp_path, clock, DOMAINS_THEN_USERS)
    service = Service(rig.emulator, method="POST", path="/v1/workspaces/ws_p/access", when="workspaceDomains",
                      side="workspaceDomains")
    with pytest.raises(ApplyError) as stopped:
        apply_through(rig, service)
    assert str(stopped.value) == (
        "workspace.a-domains: the service accepted POST /workspaces/ws_p/access but reports a different list than "
        "was sent: domain contoso.com was viewer, now absent. This is a bug in the service or in reconciler; run "
        "'reconciler plan' to see the result.")


NOTIFYING = """
version: 1
workspaces:
  renewal:
    id: ws_s
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}, {email: new@acme.com, role: viewer}]
      notify: NOTIFY
      message: Welcome to the renewal
"""


@pytest.mark.parametrize(("notify", "body", "notified"), [
    ("true", {"notifyPeople": True, "message": "Welcome to the renewal"}, [("new@acme.com", "Welcome to the renewal")]),
    ("false", {"notifyPeople": False}, []),
])
def test_the_message_of_a_list_is_sent_only_when_it_notifies(
        tmp_path: Path, clock: VirtualClock, notify: str, body: dict[str, Any],
        notified: list[tuple[str, str]]) -> None:
    rig = shared_list_rig(tmp_path, clock, NOTIFYING.replace("NOTIFY", notify))
    service = Service(rig.emulator)
    apply_through(rig, service)
    ((_, path, sent),) = service.sent
    assert path == "/v1/workspaces/ws_s/access"
    assert {k: v for k, v in sent.items() if k != "workspaceUsers"} == body
    assert [(n.email, n.message) for n in rig.emulator.notifications] == notified

