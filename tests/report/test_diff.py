"""--since: grants, escalations, revocations and downgrades since an earlier report; a state file is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.company.model import AccessRow, Leaver
from reconciler.errors import ConfigError
from reconciler.report.diff import changes_since, load_baseline, report_baseline
from reconciler.report.model import MadeReport
from reconciler.state import AccessRecord, ResourceState, State
from tests.report.conftest import ENTRY, report_of, row

BEFORE = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "raj@out.io", "viewer"),
                   row("ws_1", "user", "lee@out.io", "editor"), row("ws_2", "user", "old@out.io", "editor"))
NOW = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "raj@out.io", "editor", ENTRY),
                row("ws_1", "user", "lee@out.io", "viewer"), row("ws_1", "domain", "out.io", "viewer"),
                workspaces=("ws_1", "ws_2"))


def _changes(before: object, now: object = NOW) -> list[tuple[str, str, str, str | None, str | None]]:
    found = changes_since(before, now)  # type: ignore[arg-type]  # a Baseline
    return [(c.change, c.workspace_id, c.key, c.before, c.after) for c in found.changes]


def test_changes_since_a_report_are_listed_grants_first() -> None:
    assert _changes(report_baseline(BEFORE, label="x")) == [
        ("grant", "ws_1", "out.io", None, "viewer"),
        ("escalation", "ws_1", "raj@out.io", "viewer", "editor"),
        ("revocation", "ws_2", "old@out.io", "editor", None),
        ("downgrade", "ws_1", "lee@out.io", "editor", "viewer"),
    ]


def test_a_revocation_keeps_the_workspace_name_and_judges_the_domain() -> None:
    revoked = changes_since(report_baseline(BEFORE, label="x"), NOW).changes[2]
    assert (revoked.workspace_name, revoked.external, revoked.managed_by) == ("Name ws_2", True, "")


def test_the_same_report_twice_has_no_changes() -> None:
    assert _changes(report_baseline(NOW, label="x")) == []


def test_an_earlier_access_json_is_read_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "access.json"
    path.write_text(BEFORE.model_dump_json(), encoding="utf-8")
    baseline = load_baseline(path)
    assert baseline.label.startswith(f"the report {path} of ")
    assert _changes(baseline)[0] == ("grant", "ws_1", "out.io", None, "viewer")


def test_a_state_file_is_refused_saying_to_give_an_earlier_reports_access_json(tmp_path: Path) -> None:
    """Issue 41 item 4: a state file records only what the last apply put on the managed lists, so the
    difference against it was wrong (lee@out.io, on ws_1 all along but unrecorded, came out as a grant;
    ws_2's revocation was missed). It is refused now."""
    state = State(lineage="l", serial=7, resources={
        "group.g": ResourceState(id="ws_1", access=AccessRecord(users={"jane@acme.com": "owner", "raj@out.io": "viewer"},
                                                                 domains={"out.io": "viewer"})),
        "asset.a": ResourceState(id="as_1")})
    path = tmp_path / "reconciler.state.json"
    path.write_text(state.model_dump_json(), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_baseline(path)
    assert str(refused.value).startswith(f"--since {path} is a state file, not a report: it records only the entries ")
    assert "Give the access.json of an earlier report instead" in str(refused.value)


def test_a_file_that_is_neither_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_baseline(path)
    assert str(refused.value) == f"--since {path} is not the access.json of a reconciler report."


def test_a_report_of_another_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "access.json"
    path.write_text(json.dumps({**json.loads(BEFORE.model_dump_json()), "format_version": 9}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"is not a valid access report: format_version: Input should be less"):
        load_baseline(path)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_baseline(tmp_path / "nope.json")


def _offboarded(*rows: AccessRow, rules: tuple[str, ...] = ("offboarded",)) -> MadeReport:
    made = report_of(*rows, workspaces=("ws_1", "ws_2"))
    return made._replace(
        leavers=(Leaver(kind="user", key="ana@acme.com", rule="offboarded", location="rules.yaml:14"),),
        workspaces=tuple(w.model_copy(update={"rules": rules if w.id == "ws_2" else ()}) for w in made.workspaces))


def test_a_revocation_a_rule_made_names_the_rule_as_managed_by() -> None:
    before = report_baseline(report_of(row("ws_1", "user", "jane@acme.com", "owner"),
                                       row("ws_2", "user", "ana@acme.com", "editor")), label="x")
    (revoked,) = changes_since(before, _offboarded(row("ws_1", "user", "jane@acme.com", "owner"))).changes
    assert (revoked.change, revoked.key, revoked.managed_by) == ("revocation", "ana@acme.com",
                                                                 "rule offboarded at rules.yaml:14")


def test_a_revocation_where_the_revoking_rule_does_not_match_names_no_rule() -> None:
    before = report_baseline(report_of(row("ws_1", "user", "jane@acme.com", "owner"),
                                       row("ws_2", "user", "ana@acme.com", "editor")), label="x")
    (revoked,) = changes_since(before, _offboarded(row("ws_1", "user", "jane@acme.com", "owner"), rules=())).changes
    assert revoked.managed_by == ""
