"""The exact listing each company command asks for (respx as the service): ``report`` and
``who`` only attribute entries, so they list the access, the names, the accounts and the
templates; ``audit`` plans from its read, so it lists the fields a plan compares too."""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx

from reconciler.commands.audit import audit
from reconciler.commands.report import report
from reconciler.commands.who import who
from reconciler.company.read import ATTRIBUTION_PROPERTIES, COMPANY_PROPERTIES
from reconciler.service import Service
from tests.api.conftest import BASE, TOKEN, page

WORKSPACE = {"id": "ws_1", "object": "workspace", "name": "Portal", "accountId": "acc_1",
             "account": {"id": "acc_1", "object": "account", "name": "Customer Inc"},
             "workspaceUsers": [{"id": "wu_1", "object": "workspace-user", "role": "owner",
                                 "user": {"id": "u_1", "object": "user", "email": "jane@acme.com"}}],
             "workspaceDomains": []}


@pytest.fixture
def listing(tmp_path: Path) -> Iterator[respx.Route]:
    (tmp_path / "manifest.yaml").write_text(textwrap.dedent("""\
        version: 1
        workspaces:
          portal:
            id: ws_1
            access: {users: [{email: jane@acme.com, role: owner}]}
        """), encoding="utf-8")
    with respx.mock(base_url=BASE, assert_all_called=True) as mock:
        yield mock.get("/workspaces").mock(return_value=httpx.Response(200, json=page("workspaces", [WORKSPACE], 1, 1)))


def _service() -> Service:
    return Service(base_url=BASE, env={"RECONCILER_TOKEN": TOKEN})


def _properties(route: respx.Route) -> list[str]:
    (call,) = route.calls
    return call.request.url.params.get_list("properties[]")


def test_the_report_lists_only_what_it_attributes_entries_with(listing: respx.Route, tmp_path: Path) -> None:
    report(tmp_path, service=_service(), out=tmp_path / "out",
           now=datetime.datetime(2027, 1, 15, tzinfo=datetime.UTC))
    assert _properties(listing) == list(ATTRIBUTION_PROPERTIES) == [
        "name", "workspaceUsers.role", "workspaceUsers.user.email", "workspaceDomains.domain", "workspaceDomains.role",
        "accountId", "templateId", "account.name"]
    assert "Customer Inc" in (tmp_path / "out" / "access.csv").read_text(encoding="utf-8")


def test_who_lists_only_what_it_attributes_entries_with(listing: respx.Route, tmp_path: Path) -> None:
    assert "ws_1" in who("jane@acme.com", tmp_path, service=_service())
    assert _properties(listing) == list(ATTRIBUTION_PROPERTIES)


def test_the_audit_lists_what_a_plan_compares_as_well(listing: respx.Route, tmp_path: Path) -> None:
    audit(tmp_path, service=_service(), today=datetime.date(2027, 1, 15))
    assert _properties(listing) == list(COMPANY_PROPERTIES)
    assert {"startDate", "targetEndDate", "actualEndDate", "deal.crmOneDealId"} <= set(COMPANY_PROPERTIES)
