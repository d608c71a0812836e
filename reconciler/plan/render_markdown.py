"""Draw a Plan as a pull-request comment: a summary table, then the changes
per address with removals first.

Reads the Plan and nothing else, like the text renderer, so a reviewer sees
in the PR exactly what ``apply --plan`` would do.
"""

from __future__ import annotations

from reconciler.plan.model import AccessChange, Action, EntryChange, Plan
from reconciler.plan.render_text import cost_line, summary_line

_WORDS = {Action.CREATE: "add", Action.UPDATE: "change role", Action.DELETE: "**REMOVE**"}


def render_markdown(plan: Plan) -> str:
    if not plan.has_changes:
        return (f"### reconciler plan: no changes\n\nThe service matches the manifests "
                f"({len(plan.unchanged)} access lists checked).\n") + _warning_block(plan)
    s = plan.summary
    lines = [
        "### reconciler plan",
        "",
        "| add | change | remove | API calls | least time |",
        "|---:|---:|---:|---:|---:|",
        f"| {s.create} | {s.update} | {s.delete} | {plan.cost.total_calls} | {plan.cost.min_seconds:g} s |",
        "",
    ]
    if plan.removals:
        lines += [f"> [!WARNING]\n> {len(plan.removals)} access entries will be **removed**:"]
        lines += [f"> - `{address}`: {e.kind} `{e.key}` (was {e.before})" for address, e in plan.removals]
        lines.append("")
    # Lists with removals first: they are what a reviewer must look at.
    for change in sorted(plan.changes, key=lambda c: 0 if c.removals else 1):
        lines += _change_block(change)
    lines += [summary_line(plan), "", cost_line(plan.cost), ""]
    return "\n".join(lines) + _warning_block(plan)


def _warning_block(plan: Plan) -> str:
    if not plan.warnings:
        return ""
    return "\n> [!NOTE]\n> Warnings:\n" + "".join(f"> - {w}\n" for w in plan.warnings)


def _change_block(change: AccessChange) -> list[str]:
    mode = "" if change.authoritative else " (non-authoritative)"
    name = f" “{change.workspace_name}”" if change.workspace_name else ""
    lines = [
        f"#### `{change.address}`: workspace `{change.workspace_id}`{name}{mode}",
        "",
        "| | kind | entry | role | |",
        "|---|---|---|---|---|",
    ]
    lines += [_row(e) for e in change.entries]
    lines.append("")
    return lines


def _row(entry: EntryChange) -> str:
    if entry.action is Action.UPDATE:
        role = f"{entry.before} → {entry.after}"
    else:
        role = entry.after if entry.action is Action.CREATE else f"~~{entry.before}~~"
    return f"| `{entry.action.symbol}` | {entry.kind} | `{entry.key}` | {role} | {_WORDS[entry.action]} |"
