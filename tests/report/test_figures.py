"""The headline figures and the pictures' data, from hand-made reports."""

from __future__ import annotations

import datetime

import pytest

from reconciler.company.model import Leaver
from reconciler.report.figures import (
    TOP_REACH,
    LeaverAccess,
    external_histogram,
    headline,
    roles_by_reach,
    tally,
    widest_reach,
)
from tests.report.conftest import ENTRY, TODAY, report_of, row


def test_people_count_distinct_emails_and_external_people_those_outside() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_2", "user", "jane@acme.com", "owner"),
                     row("ws_1", "user", "raj@customer.com", "viewer"), row("ws_1", "domain", "customer.com", "viewer"))
    head = headline(made, today=TODAY)
    assert (head.workspaces, head.people, head.external_people, head.domain_grants) == (2, 2, 1, 1)


def test_a_workspace_with_no_owner_and_one_with_one_owner_are_listed_apart() -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_1", "domain", "acme.com", "owner"),
                     row("ws_2", "user", "a@acme.com", "owner"), row("ws_3", "user", "a@acme.com", "viewer"))
    head = headline(made, today=TODAY)
    assert ([(f.workspace_id, f.owners) for f in head.no_owner], [(f.workspace_id, f.owners) for f in head.one_owner]
            ) == ([("ws_3", 0)], [("ws_2", 1)])
    assert (head.owners_min, head.owners_median, head.owners_max) == (0, 1.0, 2)


def test_one_owner_is_an_alert_only_when_policy_min_owners_asks_for_two() -> None:
    rows = (row("ws_1", "user", "a@acme.com", "owner"),)
    made = report_of(*rows)
    assert headline(made, today=TODAY).one_owner_alert is False
    assert headline(made._replace(min_owners=2), today=TODAY).one_owner_alert is True


def test_a_workspace_nobody_can_see_counts_with_no_owner() -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner"), workspaces=("ws_1", "ws_empty"))
    assert tally(made).owners == {"ws_1": 1, "ws_empty": 0}


def test_grants_expiring_within_30_days_are_counted_soonest_first() -> None:
    day = datetime.timedelta(days=1)
    made = report_of(row("ws_1", "user", "late@acme.com", "viewer", ENTRY, expires=TODAY + 30 * day),
                     row("ws_1", "user", "soon@acme.com", "viewer", ENTRY, expires=TODAY + day),
                     row("ws_1", "user", "later@acme.com", "viewer", ENTRY, expires=TODAY + 31 * day),
                     row("ws_1", "user", "gone@acme.com", "viewer", ENTRY, expires=TODAY - day))
    assert [r.key for r in headline(made, today=TODAY).expiring] == ["soon@acme.com", "late@acme.com"]


def test_unmanaged_workspaces_are_those_no_manifest_reaches() -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner", ENTRY), row("ws_2", "user", "a@acme.com", "owner"))
    assert headline(made, today=TODAY).unmanaged_workspaces == 1


def test_roles_by_reach_counts_rows_highest_role_first() -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_1", "user", "x@out.io", "viewer"),
                     row("ws_2", "user", "y@out.io", "viewer"), row("ws_2", "domain", "acme.com", "viewer"),
                     row("ws_2", "user", "z@out.io", "editor"))
    assert roles_by_reach(made) == [("owner", 1, 0), ("editor", 0, 1), ("viewer", 1, 2)]


def test_the_histogram_bins_workspaces_by_distinct_external_people() -> None:
    made = report_of(row("ws_1", "user", "x@out.io", "viewer"), row("ws_1", "user", "y@out.io", "viewer"),
                     row("ws_1", "domain", "out.io", "viewer"), row("ws_2", "user", "a@acme.com", "owner"),
                     *(row("ws_3", "user", f"p{i}@out.io", "viewer") for i in range(4)))
    assert external_histogram(made) == [("0", 1), ("1", 0), ("2", 1), ("3–5", 1), ("6–10", 0), ("11–20", 0),
                                        ("21+", 0)]


def test_widest_reach_ranks_people_by_workspaces_then_email() -> None:
    made = report_of(row("ws_1", "user", "b@acme.com", "owner"), row("ws_2", "user", "b@acme.com", "owner"),
                     row("ws_1", "user", "a@acme.com", "owner"), row("ws_2", "user", "c@acme.com", "owner"),
                     row("ws_1", "domain", "acme.com", "viewer"), row("ws_2", "domain", "acme.com", "viewer"))
    assert widest_reach(made, limit=2) == [("b@acme.com", 2), ("a@acme.com", 1)]


def test_a_leaver_still_holding_access_is_listed_by_their_own_entry_and_through_their_domain() -> None:
    made = report_of(row("ws_1", "user", "ana@acme.com", "editor"), row("ws_2", "domain", "acme.com", "viewer"),
                     row("ws_3", "user", "bo@acme.com", "owner"))
    made = made._replace(leavers=(
        Leaver(kind="user", key="ana@acme.com", rule="offboarded", location="rules.yaml:14"),))
    assert headline(made, today=TODAY).leavers == (
        LeaverAccess("ana@acme.com", "offboarded", "rules.yaml:14", "ws_1", "Name ws_1", "editor", None),
        LeaverAccess("ana@acme.com", "offboarded", "rules.yaml:14", "ws_2", "Name ws_2", "viewer", "acme.com"),
    )


def test_a_person_listed_twice_on_one_workspace_reaches_it_once() -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_1", "user", "a@acme.com", "viewer"),
                     row("ws_2", "user", "a@acme.com", "viewer"), row("ws_1", "user", "x@out.io", "viewer"),
                     row("ws_1", "user", "x@out.io", "editor"))
    assert widest_reach(made) == [("a@acme.com", 2), ("x@out.io", 1)]
    assert external_histogram(made)[1] == ("1", 1)  # ws_1: one external person, listed twice


def test_widest_reach_keeps_the_top_twenty_people_and_refuses_a_longer_ranking() -> None:
    made = report_of(*(row(f"ws_{w}", "user", f"p{i:02}@acme.com", "owner") for i in range(25) for w in range(i % 3 + 1)))
    ranked = widest_reach(made)
    assert len(ranked) == TOP_REACH == 20
    assert ranked[:2] == [("p02@acme.com", 3), ("p05@acme.com", 3)] and ranked[-1] == ("p09@acme.com", 1)
    with pytest.raises(ValueError, match="the 20 people of widest reach, not 21"):
        widest_reach(made, limit=21)
