"""The audit report drawn four ways: text, markdown, JSON and CSV.

Each renderer reads the ``AuditReport`` and computes nothing of its own.
Every value came from the service or a pull request, so each is escaped for
where it goes: ``printable`` for a terminal, ``md_code``/``md_text`` for
markdown, and for CSV the RFC 4180 quoting of the ``csv`` module with
spreadsheet formulas neutralised (a cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return gets a leading ``'``, as OWASP advises, so
a workspace named ``=HYPERLINK(...)`` stays text when the file is opened).
"""

from __future__ import annotations

import csv
import io
import json

from reconciler.company.audit import AuditReport, Finding
from reconciler.text import md_code, md_text, plural, printable

AUDIT_FORMATS: tuple[str, ...] = ("text", "markdown", "json", "csv")

CSV_COLUMNS: tuple[str, ...] = (
    "finding", "rule", "rule_location", "workspace_id", "workspace_name", "account_id", "account_name",
    "address", "entry_kind", "entry", "role", "wanted", "why", "why_location", "message",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def render_audit(report: AuditReport, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
    if fmt == "csv":
        return render_csv(report)
    if fmt == "markdown":
        return render_markdown(report)
    return render_text(report)


def _scope(report: AuditReport) -> str:
    return (f"{plural(report.workspaces, 'workspace')} ({report.managed:,} named by a manifest, "
            f"{report.rules_only:,} reached only by rules), read in {plural(report.calls, 'call')}")


def _verdict(report: AuditReport) -> str:
    if report.clean:
        return "no policy violation, nothing the rules would change."
    policy, rules = len(report.of("policy")), len(report.of("rule"))
    said = plural(policy, "policy violation") if policy else "no policy violation"
    made = f"{plural(rules, 'change')} the rules would make" if rules else "nothing the rules would change"
    stuck = len(report.needs_person)
    left = f", {plural(stuck, 'workspace')} left to a person" if stuck else ""
    return f"{said}, {made}{left}."


def _workspace(finding: Finding) -> str:
    label = f'{finding.workspace_id} "{finding.workspace_name}"' if finding.workspace_name else finding.workspace_id
    account = finding.account_name or finding.account_id
    return f"{label} (account {account})" if account else label


def _rule_change(finding: Finding) -> str:
    """``+ user x viewer``, ``~ user x editor -> viewer``, ``- user x editor``."""
    if finding.role is None:
        return f"+ {finding.entry_kind} {finding.key} {finding.wanted}"
    if finding.wanted is None:
        return f"- {finding.entry_kind} {finding.key} {finding.role}"
    return f"~ {finding.entry_kind} {finding.key} {finding.role} -> {finding.wanted}"


def render_text(report: AuditReport) -> str:
    lines = [f"Audit of {_scope(report)}: {_verdict(report)}"]
    policy, rules = report.of("policy"), report.of("rule")
    if policy:
        lines += ["", f"Policy violations ({len(policy):,}):"]
        lines += [f"  {printable(_workspace(f))}: {printable(f.message)}; "
                  f"{printable(f.why.text() if f.why else '')}" for f in policy]
    if rules:
        lines += ["", f"What the rules would change ({len(rules):,}):"]
        lines += [f"  {printable(_workspace(f))}: {printable(_rule_change(f))}: {printable(f.problem)}"
                  for f in rules]
    if report.needs_person:
        lines += ["", f"Left to a person, the rules skip them ({len(report.needs_person):,}):"]
        lines += [f"  {printable(item)}" for item in report.needs_person]
    return "\n".join(lines) + "\n"


def render_markdown(report: AuditReport) -> str:
    title = "No findings" if report.clean else plural(len(report.findings) + len(report.needs_person), "finding")
    lines = ["## reconciler audit", "", f"**{title}** in {md_text(_scope(report))}."]
    policy, rules = report.of("policy"), report.of("rule")
    if policy:
        lines += ["", f"### Policy violations ({len(policy):,})", "",
                  "| Workspace | Account | Entry | Role | Violation | Why it is there |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {_md_workspace(f)} | {_md_account(f)} | {f.entry_kind} {md_code(f.key, cell=True)} "
                  f"| {md_text(f.role or '')} | {md_text(f.problem)} "
                  f"| {md_text(f.why.text() if f.why else '')} |" for f in policy]
    if rules:
        lines += ["", f"### What the rules would change ({len(rules):,})", "",
                  "| Workspace | Account | Entry | Now | After | Rule |", "|---|---|---|---|---|---|"]
        lines += [f"| {_md_workspace(f)} | {_md_account(f)} | {f.entry_kind} {md_code(f.key, cell=True)} "
                  f"| {md_text(f.role or 'no access')} | {md_text(f.wanted or 'no access')} "
                  f"| {md_text(f.problem)} |" for f in rules]
    if report.needs_person:
        lines += ["", f"### Left to a person, the rules skip them ({len(report.needs_person):,})", ""]
        lines += [f"- {md_text(item)}" for item in report.needs_person]
    return "\n".join(lines) + "\n"


def _md_workspace(finding: Finding) -> str:
    name = f" {md_text(finding.workspace_name)}" if finding.workspace_name else ""
    return f"{md_code(finding.workspace_id, cell=True)}{name}"


def _md_account(finding: Finding) -> str:
    account = finding.account_name or finding.account_id
    return md_text(account) if account else ""


def render_csv(report: AuditReport) -> str:
    """One row per finding under a header row (RFC 4180: CRLF line ends, fields
    with a comma, quote or line break quoted, quotes doubled)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for f in report.findings:
        writer.writerow([csv_cell(value) for value in (
            f.kind, f.rule, f.location, f.workspace_id, f.workspace_name, f.account_id, f.account_name,
            f.address, f.entry_kind, f.key, f.role, f.wanted, f.why.text() if f.why else None,
            f.why.location if f.why else None, f.message)])
    return out.getvalue()


def csv_cell(value: str | None) -> str:
    """A CSV cell: empty for None; a value a spreadsheet would read as a
    formula is prefixed with ``'``."""
    if value is None:
        return ""
    return f"'{value}" if value.startswith(_FORMULA_START) else value
