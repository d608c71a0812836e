"""The report document made from the company read: internal or external, how managed, order."""

from __future__ import annotations

from reconciler.company.model import CompanyAccess, CompanyWorkspace, Why
from reconciler.report.model import make_report
from tests.report.conftest import ENTRY, GENERATED, report_of, row


def test_a_person_of_an_internal_domain_or_below_it_is_internal() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "bo@eu.acme.com", "editor"),
                     row("ws_1", "user", "eve@acme.com.evil", "editor"), row("ws_1", "domain", "acme.com", "viewer"))
    assert [(r.key, r.external) for r in made.rows] == [
        ("bo@eu.acme.com", False), ("eve@acme.com.evil", True), ("jane@acme.com", False), ("acme.com", False)]


def test_without_internal_domains_everyone_is_external() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), internal=())
    assert [r.external for r in made.rows] == [True]


def test_internal_domains_are_normalised_and_sorted() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), internal=(" Acme.COM. ", "b.io", "acme.com"))
    assert made.internal_domains == ("acme.com", "b.io")


def test_managed_by_names_the_manifest_line_or_says_not_managed() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", ENTRY), row("ws_1", "user", "x@acme.com", "viewer"))
    assert [r.managed_by for r in made.rows] == ["group.customer-inc at manifests/acme.yaml:12", "not managed"]


def test_rows_are_ordered_by_workspace_then_users_before_domains() -> None:
    made = report_of(row("ws_2", "user", "b@acme.com", "owner"), row("ws_1", "domain", "a.com", "viewer"),
                     row("ws_1", "user", "z@acme.com", "owner"))
    assert [(r.workspace_id, r.key) for r in made.rows] == [("ws_1", "z@acme.com"), ("ws_1", "a.com"),
                                                            ("ws_2", "b@acme.com")]


def test_a_workspace_is_managed_when_a_manifest_names_it_and_a_rule_alone_does_not_make_it_so() -> None:
    rule = Why(source="rule", location="rules.yaml:5", rule="baseline", role="viewer")
    company = CompanyAccess(
        workspaces=(CompanyWorkspace(id="ws_list", address="workspace.portal", managed="manifest"),
                    CompanyWorkspace(id="ws_rule", managed="rules", rules=("baseline",)),
                    CompanyWorkspace(id="ws_none")),
        rows=(row("ws_rule", "user", "sec@acme.com", "viewer", rule), row("ws_none", "user", "x@acme.com", "owner")))
    made = make_report(company, generated_at=GENERATED, internal_domains=())
    assert [(w.id, w.managed, w.rules_only) for w in made.workspaces] == [
        ("ws_list", True, False), ("ws_none", False, False), ("ws_rule", False, True)]


def test_source_date_epoch_dates_the_report_and_a_bad_one_is_refused() -> None:
    import datetime

    import pytest

    from reconciler.errors import ConfigError
    from reconciler.commands.report import source_date

    assert source_date({"SOURCE_DATE_EPOCH": "1800000000"}) == datetime.datetime(2027, 1, 15, 8, 0,
                                                                                  tzinfo=datetime.UTC)
    assert source_date({}) is None
    with pytest.raises(ConfigError, match=r"SOURCE_DATE_EPOCH='soon' is not a number of seconds"):
        source_date({"SOURCE_DATE_EPOCH": "soon"})
