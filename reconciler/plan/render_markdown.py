"""Draw a Plan as a pull-request comment: a summary table, then the changes
per address with removals first.

Reads the Plan and nothing else, like the text renderer, so a reviewer sees
in the PR exactly what ``apply --plan`` would do.
"""

from __future__ import annotations

from reconciler.plan.model import (
    AccessChange,
    Action,
    AssetChange,
    Change,
    ConnectChange,
    CreateChange,
    EntryChange,
    Plan,
)
from reconciler.plan.render_text import (
    asset_fields,
    asset_title,
    asset_value,
    cost_line,
    create_fields,
    setting_text,
    summary_line,
)
from reconciler.text import printable

_WORDS = {Action.CREATE: "add", Action.UPDATE: "change role", Action.DELETE: "**REMOVE**"}


def render_markdown(plan: Plan) -> str:
    if not plan.has_changes:
        return (f"### reconciler plan: no changes\n\nThe service matches the manifests "
                f"({len(plan.unchanged)} access list{'' if len(plan.unchanged) == 1 else 's'} checked).\n") + _warning_block(plan)
    s = plan.summary
    lines = [
        "### reconciler plan",
        "",
        "| add | change | remove | workspaces created | connected | settings | API calls | credits | least time |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {s.create} | {s.update} | {s.delete} | {s.workspaces_created} | {s.workspaces_connected} "
        f"| {s.settings} | {plan.cost.total_calls} | {plan.cost.workspace_credits} | {plan.cost.min_seconds:g} s |",
        "",
    ]
    if plan.removals:
        lines += [f"> [!WARNING]\n> {len(plan.removals)} access entries will be **removed**:"]
        lines += [f"> - `{address}`: {e.kind} `{e.key}` (was {e.before})" for address, e in plan.removals]
        lines.append("")
    # Lists with removals first: they are what a reviewer must look at.
    for change in sorted(plan.changes, key=lambda c: 0 if isinstance(c, AccessChange) and c.removals else 1):
        lines += _change_block(change)
    lines += [summary_line(plan), "", cost_line(plan.cost), ""]
    return "\n".join(printable(line) for line in lines) + _warning_block(plan)


def _warning_block(plan: Plan) -> str:
    if not plan.warnings:
        return ""
    return "\n> [!NOTE]\n> Warnings:\n" + "".join(f"> - {printable(w)}\n" for w in plan.warnings)


def _change_block(change: Change) -> list[str]:
    where = f" ({change.location})" if change.location else ""
    if isinstance(change, AccessChange):
        return _access_block(change)
    if isinstance(change, CreateChange):
        fields = "".join(f"; {key} `{value}`" for key, value in create_fields(change))
        return [f"#### `{change.address}`: **create** workspace “{change.name}” from template "
                f"`{change.template_id}` in `{change.group}` ({change.credits} credit){fields}{where}", ""]
    if isinstance(change, AssetChange):
        return _asset_block(change, where)
    if isinstance(change, ConnectChange):
        return [f"#### `{change.address}`: **connect** workspace `{change.workspace_id}` to `{change.group}` "
                f"(homepage `{change.homepage_id}`){where}", "", change.reason, ""]
    return [f"#### `{change.address}`: {setting_text(change)}{where}", ""]


def _asset_block(change: AssetChange, where: str) -> list[str]:
    if change.action == "update":
        rows = [f"| {f} | {_cell(change.before.get(f))} | {_cell(asset_value(change, f))} |" for f in change.patch]
        return [f"#### `{change.address}`: **update** asset `{change.asset_id}`{where}", "",
                "| field | last applied | manifest |", "|---|---|---|", *rows, ""]
    verb = "**replace**" if change.action == "replace" else "**create**"
    rows = [f"| {k} | {v} |" for k, v in asset_fields(change)]
    return [f"#### `{change.address}`: {verb} {asset_title(change)}{where}", "", "| | |", "|---|---|", *rows, ""]


def _cell(value: object) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value) or "(none)"
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def _access_block(change: AccessChange) -> list[str]:
    mode = "" if change.authoritative else " (non-authoritative)"
    name = f" “{change.workspace_name}”" if change.workspace_name else ""
    rides = [f"Carried by the creation of `{change.rides_on}` (no call of its own).", ""] if change.rides_on else []
    lines = [
        f"#### `{change.address}`: workspace `{change.workspace_id}`{name}{mode}",
        "",
        *rides,
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
