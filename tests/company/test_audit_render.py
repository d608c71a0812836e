"""The audit's findings, and each format's exact output for a small case.

The markdown is parsed with markdown-it-py (CommonMark with GFM tables, as
GitHub renders an issue) and the CSV with the csv module: a hostile
workspace name must come back as exactly its characters, in its own cell.
"""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from reconciler.company.audit import AuditReport, audit
from reconciler.company.audit_render import CSV_COLUMNS, csv_cell, render_audit
from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, Why
from reconciler.manifest import load_desired
from reconciler.plan.model import AccessChange, AccessSnapshot, Action, EntryChange, EntrySource, Plan

POLICY = """\
version: 1
policy:
  allowedDomains: [acme.com]
  maxRoleOutside: viewer
  protectedOwners: [ceo@acme.com]
"""
# What the plan of the read says for the rules: security@ is added to ws_1, no manifest's list.
RULE_PLAN = Plan(changes=(AccessChange(
    address="unmanaged.ws_1", governs="rules", rules=("security-baseline",), workspace_id="ws_1",
    strategy="replace", authoritative=False,
    entries=(EntryChange(kind="user", key="security@acme.com", action=Action.CREATE, after="viewer",
                         source=EntrySource(kind="rule", location="rules.yaml:4", rule="security-baseline")),),
    before=AccessSnapshot(users={"eve@gmail.com": "editor"}),
    after=AccessSnapshot(users={"eve@gmail.com": "editor", "security@acme.com": "viewer"})),))


def _report(tmp_path: Path, name: str = "Side project") -> AuditReport:
    (tmp_path / "policy.yaml").write_text(POLICY, encoding="utf-8")
    company = CompanyAccess(
        workspaces=(CompanyWorkspace(id="ws_1", name=name, account_name="Partner Co", address=None),
                    CompanyWorkspace(id="ws_2", name="Home", address="group.home", managed="manifest")),
        rows=(AccessRow(workspace_id="ws_1", workspace_name=name, account_name="Partner Co", kind="user",
                        key="eve@gmail.com", role="editor", why=Why(source="unmanaged")),
              AccessRow(workspace_id="ws_2", workspace_name="Home", kind="user", key="ceo@acme.com",
                        role="editor", why=Why(source="entry", location="home.yaml:7", address="group.home",
                                               role="owner"))),
        calls=1)
    return audit(load_desired(tmp_path), company, RULE_PLAN)


def _at(tmp_path: Path, line: int) -> str:
    return f"{tmp_path / 'policy.yaml'}:{line}"


def test_findings_are_the_policy_violations_then_the_rule_changes(tmp_path: Path) -> None:
    report = _report(tmp_path)
    assert [(f.kind, f.rule, f.workspace_id, f.key, f.role, f.wanted) for f in report.findings] == [
        ("policy", "maxRoleOutside", "ws_1", "eve@gmail.com", "editor", "viewer"),
        ("policy", "protectedOwners", "ws_2", "ceo@acme.com", "editor", "owner"),
        ("rule", "security-baseline", "ws_1", "security@acme.com", None, "viewer"),
    ]


def test_a_company_with_no_policy_and_no_rule_change_is_clean(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("version: 1\n", encoding="utf-8")
    company = CompanyAccess(rows=(AccessRow(workspace_id="ws_1", kind="user", key="eve@gmail.com", role="owner",
                                            why=Why(source="unmanaged")),), calls=1)
    assert audit(load_desired(tmp_path), company, Plan()).clean


def test_the_text_lists_violations_then_rule_changes(tmp_path: Path) -> None:
    assert render_audit(_report(tmp_path), "text") == (
        "Audit of 2 workspaces (1 named by a manifest, 0 reached only by rules), read in 1 call: 2 policy violations, 1 change the "
        "rules would make.\n"
        "\n"
        "Policy violations (2):\n"
        f'  ws_1 "Side project" (account Partner Co): user eve@gmail.com editor: outside the allowed domains: at '
        f"most viewer (policy maxRoleOutside at {_at(tmp_path, 4)}), not editor; not managed: granted in the web "
        "app\n"
        f'  ws_2 "Home": user ceo@acme.com editor: a protected owner (policy protectedOwners at {_at(tmp_path, 5)}) '
        "holds editor, not owner; group.home at home.yaml:7\n"
        "\n"
        "What the rules would change (1):\n"
        '  ws_1 "Side project" (account Partner Co): + user security@acme.com viewer: rule security-baseline '
        "ensures viewer (rules.yaml:4)\n")


def test_the_markdown_is_a_table_per_kind_of_finding(tmp_path: Path) -> None:
    text = render_audit(_report(tmp_path), "markdown")
    assert text.splitlines()[:4] == [
        "## reconciler audit", "", "**3 findings** in 2 workspaces (1 named by a manifest, 0 reached only by rules), read in "
        "1 call.", ""]
    tables = _tables(text)
    assert tables == [
        [["Workspace", "Account", "Entry", "Role", "Violation", "Why it is there"],
         ["ws_1 Side project", "Partner Co", "user eve@gmail.com", "editor",
          f"outside the allowed domains: at most viewer (policy maxRoleOutside at {_at(tmp_path, 4)}), not editor",
          "not managed: granted in the web app"],
         ["ws_2 Home", "", "user ceo@acme.com", "editor",
          f"a protected owner (policy protectedOwners at {_at(tmp_path, 5)}) holds editor, not owner",
          "group.home at home.yaml:7"]],
        [["Workspace", "Account", "Entry", "Now", "After", "Rule"],
         ["ws_1 Side project", "Partner Co", "user security@acme.com", "no access", "viewer",
          "rule security-baseline ensures viewer (rules.yaml:4)"]],
    ]


def test_the_json_is_the_report_with_its_findings(tmp_path: Path) -> None:
    doc = json.loads(render_audit(_report(tmp_path), "json"))
    assert (doc["format_version"], doc["workspaces"], doc["managed"], doc["calls"]) == (1, 2, 1, 1)
    assert doc["findings"][2] == {
        "kind": "rule", "rule": "security-baseline", "location": "rules.yaml:4", "workspace_id": "ws_1",
        "workspace_name": "Side project", "account_id": None, "account_name": "Partner Co", "address": None,
        "entry_kind": "user", "key": "security@acme.com", "role": None, "wanted": "viewer",
        "why": {"source": "rule", "location": "rules.yaml:4", "address": None, "team": None,
                "rule": "security-baseline", "role": "viewer"},
        "problem": "rule security-baseline ensures viewer (rules.yaml:4)",
        "message": "user security@acme.com no access: rule security-baseline ensures viewer (rules.yaml:4)"}


def test_the_csv_has_a_header_and_one_row_per_finding(tmp_path: Path) -> None:
    text = render_audit(_report(tmp_path), "csv")
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert text.endswith("\r\n") and text.count("\r\n") == 4
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [(r["finding"], r["rule"], r["workspace_id"], r["entry"], r["role"], r["wanted"]) for r in rows] == [
        ("policy", "maxRoleOutside", "ws_1", "eve@gmail.com", "editor", "viewer"),
        ("policy", "protectedOwners", "ws_2", "ceo@acme.com", "editor", "owner"),
        ("rule", "security-baseline", "ws_1", "security@acme.com", "", "viewer"),
    ]
    assert rows[1]["why"] == "group.home at home.yaml:7" and rows[1]["why_location"] == "home.yaml:7"


HOSTILE = '=HYPERLINK("http://evil.io")|**x** <b>@team</b>\x1b[2J\u202e\n| a | b |'


def test_a_hostile_workspace_name_is_escaped_in_the_text(tmp_path: Path) -> None:
    text = render_audit(_report(tmp_path, HOSTILE), "text")
    assert "\x1b" not in text and "\u202e" not in text
    assert '"=HYPERLINK("http://evil.io")|**x** <b>@team</b>\\x1b[2J\\u202e\\x0a| a | b |"' in text
    assert text.count("\n") == 8  # the same lines as with a plain name


def test_a_hostile_workspace_name_stays_in_its_markdown_cell(tmp_path: Path) -> None:
    text = render_audit(_report(tmp_path, HOSTILE), "markdown")
    tables = _tables(text)
    shown = "ws_1 " + HOSTILE.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e").replace("\n", "\\x0a")
    assert [row[0] for row in tables[0][1:]] == [shown, "ws_2 Home"]
    assert [len(row) for table in tables for row in table] == [6, 6, 6, 6, 6]
    assert "<b>" not in MarkdownIt("commonmark").enable("table").render(text)


def test_a_hostile_workspace_name_is_one_csv_cell_that_no_spreadsheet_runs(tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(render_audit(_report(tmp_path, HOSTILE), "csv"), newline="")))
    assert [r["workspace_name"] for r in rows] == ["'" + HOSTILE, "Home", "'" + HOSTILE]


@pytest.mark.parametrize("value", ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"])
def test_a_csv_cell_a_spreadsheet_would_run_starts_with_a_quote(value: str) -> None:
    assert csv_cell(value) == "'" + value


def test_a_csv_cell_of_plain_text_is_unchanged() -> None:
    assert (csv_cell("a-b@c=d"), csv_cell(None)) == ("a-b@c=d", "")


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(markdown: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return parser.tables
