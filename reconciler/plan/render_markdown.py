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
from reconciler.plan.people import entry_workspaces, people, totals
from reconciler.plan.render_text import (
    asset_fields,
    asset_title,
    asset_value,
    cost_line,
    count_words,
    left_alone_lines,
    create_fields,
    setting_text,
    summary_line,
    target_notice,
)
from reconciler.text import printable

_WORDS = {Action.CREATE: "add", Action.UPDATE: "change role", Action.DELETE: "**REMOVE**"}


def render_markdown(plan: Plan) -> str:
    if not plan.has_changes:
        return (f"### reconciler plan: no changes\n\nThe service matches the manifests "
                f"({len(plan.unchanged)} access list{'' if len(plan.unchanged) == 1 else 's'} checked).\n") + _left_alone_block(plan) + _warning_block(plan)
    s = plan.summary
    lines = [
        "### reconciler plan",
        "",
        "| add | change | remove | workspaces created | connected | settings | assets | API calls | credits "
        "| least time |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {s.create} | {s.update} | {s.delete} | {s.workspaces_created} | {s.workspaces_connected} "
        f"| {s.settings} | {s.assets_created + s.assets_replaced + s.assets_updated} | {plan.cost.total_calls} "
        f"| {plan.cost.workspace_credits} | {plan.cost.min_seconds:g} s |",
        "",
    ]
    if plan.targets:
        lines += [f"> [!IMPORTANT]\n> {target_notice(plan)[0]}", ""]
    lines += _review_block(plan)
    # Lists with removals first: they are what a reviewer must look at.
    for change in sorted(plan.changes, key=lambda c: 0 if isinstance(c, AccessChange) and c.removals else 1):
        lines += _change_block(change)
    lines += [summary_line(plan), "", cost_line(plan.cost), ""]
    lines += _people_block(plan)
    return "\n".join(printable(line) for line in lines) + _left_alone_block(plan) + _warning_block(plan)


def _review_block(plan: Plan) -> list[str]:
    """Revocations, then escalations, each with its address and file:line."""
    found = [(c, e) for c in plan.access_changes for e in c.entries if e.needs_review]
    if not found:
        return []
    found.sort(key=lambda item: 0 if item[1].privilege == "revocation" else 1)
    lines = ["> [!WARNING]", "> **Review first**: revocations and escalations of access"]
    for change, e in found:
        what = f"loses {e.before}" if e.privilege == "revocation" else f"{e.before} → {e.after}"
        workspaces = entry_workspaces(change, e)
        on = f" on {count_words(workspaces, 'workspace')}" if workspaces is not None else ""
        flags = "".join(f" `{f}`" for f in e.flags)
        where = f" ({e.location})" if e.location else ""
        lines.append(f"> - **{e.privilege}** `{change.address}`: {e.kind} `{e.key}` {what}{on}{flags}{where}")
    return [*lines, ""]


def _people_block(plan: Plan) -> list[str]:
    """The per-person view, folded: what each person gains, loses or changes, where."""
    found = people(plan)
    if not found:
        return []
    sums = totals(found)
    counted = ", ".join(count_words(sums[p], p) for p in ("grant", "escalation", "downgrade", "revocation"))
    lines = ["<details>", f"<summary>By person: {count_words(len(found), 'person or domain')}; "
             f"on workspaces: {counted}</summary>", "",
             "| who | workspace | change | class | list |", "|---|---|---|---|---|"]
    for person in found:
        for c in person.changes:
            role = (f"gains {c.after}" if c.before is None else f"loses {c.before}" if c.after is None else
                    f"{c.before} → {c.after}")
            lines.append(f"| {person.kind} `{person.key}` | {c.workspace} | {role} | {c.privilege} | `{c.address}` |")
    return [*lines, "", "</details>", ""]


def _left_alone_block(plan: Plan) -> str:
    """Entries of non-authoritative lists left alone for lack of state, as in the text view."""
    lines = left_alone_lines(plan)
    if not lines:
        return ""
    rows = "".join(f"> - {e.kind} `{printable(e.key)}` {e.role} on `{e.address}`: not listed; no state says "
                   "whether reconciler granted it\n" for e in plan.left_alone)
    return f"\n> [!CAUTION]\n> {lines[0]}\n{rows}"


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
    table = ["| | |", "|---|---|", *rows, ""] if rows else []
    return [f"#### `{change.address}`: {verb} {asset_title(change)}{where}", "", *table]


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
    reaches = ([f"The group's list reaches {len(change.reaches)} workspaces: {', '.join(change.reaches)}.", ""]
               if len(change.reaches) > 1 else [])
    notifies = ([f"Notifies {len(change.notified)} "
                 f"{'person' if len(change.notified) == 1 else 'people'} by email: "
                 f"{', '.join(f'`{e}`' for e in change.notified)}.", ""] if change.notified else [])
    where = f" ({change.location})" if change.location else ""
    lines = [
        f"#### `{change.address}`: workspace `{change.workspace_id}`{name}{mode}{where}",
        "",
        *rides,
        *reaches,
        *notifies,
        "| | kind | entry | role | class | where |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_row(e) for e in change.entries]
    lines.append("")
    return lines


def _row(entry: EntryChange) -> str:
    if entry.action is Action.UPDATE:
        role = f"{entry.before} → {entry.after}"
    else:
        role = entry.after if entry.action is Action.CREATE else f"~~{entry.before}~~"
    flags = "".join(f" `{f}`" for f in entry.flags)
    return (f"| `{entry.action.symbol}` | {entry.kind} | `{entry.key}` | {role} | "
            f"{_WORDS[entry.action]}: {entry.privilege}{flags} | {entry.location or ''} |")
