"""``who``: one person's (or domain's) rows of the company read, and how they are shown."""

from __future__ import annotations

import json

import pytest

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, Why
from reconciler.company.who import parse_subject, render_who, who
from reconciler.errors import ConfigError

UNMANAGED = Why(source="unmanaged")
ENTRY = Why(source="entry", location="manifests/acme.yaml:12", address="group.customer-inc", role="owner")


def _row(wid: str, kind: str, key: str, role: str, why: Why = UNMANAGED, **extra: object) -> AccessRow:
    return AccessRow(workspace_id=wid, workspace_name=f"Name {wid}", kind=kind, key=key, role=role, why=why,
                     **extra)  # type: ignore[arg-type]


COMPANY = CompanyAccess(
    workspaces=(CompanyWorkspace(id="ws_1", managed="manifest"), CompanyWorkspace(id="ws_2", managed="manifest"),
                CompanyWorkspace(id="ws_3")),
    rows=(
        _row("ws_1", "user", "jane@customer.com", "owner", ENTRY, account_name="Customer Inc"),
        _row("ws_2", "domain", "customer.com", "viewer", group_homepage="ws_1", probable_member=True),
        _row("ws_3", "user", "raj@customer.com", "editor"),
        _row("ws_3", "user", "jane@customer.com.evil", "editor"),
    ),
    calls=1,
)


def test_an_email_is_a_user_and_anything_else_a_domain() -> None:
    assert parse_subject(" Jane@Customer.COM ") == ("user", "jane@customer.com")
    assert parse_subject("Customer.com.") == ("domain", "customer.com")


def test_a_subject_that_is_neither_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_subject("not a domain")
    assert str(refused.value) == ("who 'not a domain': not a domain: it holds U+0020 (SPACE). "
                                  "Give an email (jane@acme.com) or a domain (acme.com).")


def test_a_person_is_listed_with_their_domain_entries_said_so() -> None:
    answer = who(COMPANY, "user", "jane@customer.com")
    assert [(a.workspace_id, a.via) for a in answer.access] == [("ws_1", "self"), ("ws_2", "domain")]


def test_a_domain_is_listed_with_the_users_of_that_domain_only() -> None:
    answer = who(COMPANY, "domain", "customer.com")
    assert [(a.workspace_id, a.key, a.via) for a in answer.access] == [
        ("ws_1", "jane@customer.com", "member"), ("ws_2", "customer.com", "self"),
        ("ws_3", "raj@customer.com", "member")]


def test_the_text_names_each_workspace_role_and_why() -> None:
    assert render_who(who(COMPANY, "user", "jane@customer.com")) == (
        "jane@customer.com has access to 2 workspaces: 2 named by a manifest, 0 reached only by rules, 0 by neither "
        "(3 workspaces read in 1 call):\n"
        '  ws_1 "Name ws_1" (account Customer Inc): owner; group.customer-inc at manifests/acme.yaml:12\n'
        '  ws_2 "Name ws_2" (probably in the group of ws_1): viewer through domain customer.com; '
        "not managed: granted in the web app\n")


def test_no_access_anywhere_is_said_in_one_line() -> None:
    assert render_who(who(COMPANY, "user", "nobody@acme.com")) == (
        "nobody@acme.com has access to no workspace (3 workspaces read in 1 call).\n")


def test_the_json_is_the_answer_with_each_row_and_its_why() -> None:
    doc = json.loads(render_who(who(COMPANY, "user", "jane@customer.com"), fmt="json"))
    assert (doc["format_version"], doc["subject"], doc["kind"], doc["workspaces_read"], doc["calls"]) == (
        1, "jane@customer.com", "user", 3, 1)
    assert doc["access"][0]["why"] == {"source": "entry", "location": "manifests/acme.yaml:12",
                                       "address": "group.customer-inc", "team": None, "rule": None, "role": "owner"}
    assert doc["access"][1]["via"] == "domain"


def test_a_hostile_workspace_name_is_escaped_in_the_text() -> None:
    company = CompanyAccess(workspaces=(CompanyWorkspace(id="ws_1"),), rows=(
        AccessRow(workspace_id="ws_1", workspace_name="Evil\x1b[2J\u202eName\nX", kind="user", key="a@acme.com",
                  role="owner", why=Why(source="unmanaged")),), calls=1)
    text = render_who(who(company, "user", "a@acme.com"))
    assert '"Evil\\x1b[2J\\u202eName\\x0aX"' in text
    assert "\x1b" not in text and "\u202e" not in text and text.count("\n") == 2


def test_a_domain_does_not_list_users_of_a_domain_that_merely_ends_like_it() -> None:
    company = COMPANY.model_copy(update={"rows": (*COMPANY.rows, _row("ws_3", "user", "bob@notcustomer.com", "viewer"),
                                                  _row("ws_3", "user", "eve@sub.customer.com", "viewer"))})
    assert [a.key for a in who(company, "domain", "customer.com").access] == [
        "jane@customer.com", "customer.com", "raj@customer.com"]
