"""Draw a Plan for a terminal, in Terraform's idiom (+ ~ -).

Reads the Plan and nothing else: whatever this shows is what JSON shows.
Removals of access are the one thing a reviewer must not miss, so they are
red, marked in words, and repeated in a block of their own after the
summary.
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.plan.model import (
    AccessChange,
    Action,
    AssetChange,
    Change,
    ConnectChange,
    Cost,
    CreateChange,
    EntryChange,
    Plan,
    SettingChange,
)
from reconciler.text import printable

_ANSI = {"create": "32", "update": "33", "delete": "1;31", "bold": "1", "dim": "2"}


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        # Every line a plan shows passes here: values from a manifest or the
        # service are made printable before our own colours are added.
        text = printable(text)
        return f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if self.color else text


def render_text(plan: Plan, *, color: bool = False) -> str:
    paint = _Paint(color)
    if not plan.has_changes:
        checked = len(plan.unchanged)
        return (
            f"No changes. The service matches the manifests "
            f"({checked} access list{'s' if checked != 1 else ''} checked).\n"
        ) + "".join(line + "\n" for line in warning_lines(plan, paint))
    lines = ["reconciler will make these changes:", ""]
    for change in plan.changes:
        lines += change_lines(change, paint)
        lines.append("")
    lines.append(summary_line(plan))
    removals = plan.removals
    if removals:
        lines.append(
            paint(f"! {len(removals)} access entr{'ies' if len(removals) != 1 else 'y'} will be REMOVED:", "delete")
        )
        lines += [paint(f"!   {address}: {e.kind} {e.key} (was {e.before})", "delete") for address, e in removals]
    lines.append(cost_line(plan.cost))
    lines += warning_lines(plan, paint)
    return "\n".join(lines) + "\n"


def warning_lines(plan: Plan, paint: Callable[[str, str], str] = lambda text, _style: printable(text)) -> list[str]:
    """The plan's warnings, each on its own line after a blank one."""
    if not plan.warnings:
        return []
    return ["", *(paint(f"Warning: {w}", "update") for w in plan.warnings)]


def summary_line(plan: Plan) -> str:
    s = plan.summary
    line = f"Plan: {s.create} to add, {s.update} to change, {s.delete} to remove"
    workspaces = [f"{n} {what}" for n, what in ((s.workspaces_created, "to create"),
                                               (s.workspaces_connected, "to connect")) if n]
    if workspaces:
        line += f"; workspaces: {', '.join(workspaces)}"
    if s.settings:
        line += f"; {s.settings} section/page/task value{'s' if s.settings != 1 else ''} to set"
    assets = [f"{n} {what}" for n, what in ((s.assets_created, "to create"), (s.assets_replaced, "to replace"),
                                           (s.assets_updated, "to update")) if n]
    if assets:
        line += f"; assets: {', '.join(assets)}"
    return line + "."


def cost_line(cost: Cost) -> str:
    by_class = ", ".join(f"{cls} {n}" for cls, n in cost.calls_by_class.items())
    reads = (f", including {cost.refresh_reads} re-reads of the lists before and after writing"
             if cost.refresh_reads else "")
    n = cost.conversion_polls
    polls = (f" With apply --wait, at least {n} more call{'s' if n != 1 else ''} (file_retrieval, 60/min) "
             f"follow the conversion of {n} file{'s' if n != 1 else ''}."
             if cost.conversion_polls else "")
    return (
        f"Cost: {cost.total_calls} API call{'s' if cost.total_calls != 1 else ''} ({by_class}){reads}; "
        f"{cost.workspace_credits} workspace credits; at least {cost.min_seconds:g} s within the rate limits."
        f"{polls}"
    )


def change_lines(change: Change, paint: Callable[[str, str], str]) -> list[str]:
    """The lines of one change: a header naming it, its calls, then what it does."""
    if isinstance(change, AccessChange):
        return _access_lines(change, paint)
    where = f" ({change.location})" if change.location else ""
    if isinstance(change, CreateChange):
        return [
            paint(f"  # {change.address}: new workspace in {change.group}{where}", "bold"),
            paint(f"  # {_calls(change)}; uses {change.credits} workspace credit", "dim"),
            paint(f'  + workspace "{change.name}" from template {change.template_id} {{', "create"),
            *(paint(f"      {key:<14} {value}", "create") for key, value in create_fields(change)),
            paint("    }", "create"),
        ]
    if isinstance(change, AssetChange):
        return _asset_lines(change, where, paint)
    if isinstance(change, ConnectChange):
        name = f' "{change.workspace_name}"' if change.workspace_name else ""
        return [
            paint(f"  # {change.address}: workspace {change.workspace_id}{name}{where}", "bold"),
            paint(f"  # {_calls(change)}; {change.reason}", "dim"),
            paint(f"  + connect to {change.group} (homepage {change.homepage_id})", "create"),
        ]
    return [
        paint(f"  # {change.address}{where}", "bold"),
        paint(f"  # {_calls(change)}{'; ' + change.reason if change.reason else ''}", "dim"),
        paint(f"  ~ {setting_text(change)}", "update"),
    ]


def _asset_lines(change: AssetChange, where: str, paint: Callable[[str, str], str]) -> list[str]:
    head = [paint(f"  # {change.address}{where}", "bold"),
            paint(f"  # {_calls(change)}{'; ' + change.reason if change.reason else ''}", "dim")]
    if change.action == "update":
        rows = [(f, f"{_value(change.before.get(f))} -> {_value(asset_value(change, f))}") for f in change.patch]
        return [*head, paint(f"  ~ asset {change.asset_id} {{", "update"),
                *(paint(f"      {k:<12} {v}", "update") for k, v in rows), paint("    }", "update")]
    symbol, style = ("-/+", "delete") if change.action == "replace" else ("+", "create")
    fields = asset_fields(change)
    if not fields:
        return [*head, paint(f"  {symbol} {asset_title(change)}", style)]
    return [*head, paint(f"  {symbol} {asset_title(change)} {{", style),
            *(paint(f"      {k:<12} {v}", "create") for k, v in fields), paint("    }", style)]


def asset_title(change: AssetChange) -> str:
    """``asset pdf "Pricing" from assets/p.pdf``: what a new asset is made of."""
    name = f' "{change.name}"' if change.name else ""
    source = (f" from {change.file_label}" if change.file_label else
              f" of {change.url}" if change.url else " with custom embed code")
    return f"asset {change.asset_type}{name}{source}"


def asset_fields(change: AssetChange) -> list[tuple[str, str]]:
    """The values a new asset is created (and then PATCHed) with, as (key, value)."""
    fields: list[tuple[str, str]] = []
    if change.file_label:
        fields.append(("file", f"{change.size:,} bytes, {change.mime_type}, sha256 {(change.digest or '')[:12]}"))
    if change.file_id:
        fields.append(("resumes", f"file {change.file_id} (uploaded by an earlier apply)"))
    if change.metadata:
        fields.append(("metadata", ", ".join(f"{k} {v:g}" for k, v in change.metadata.items())))
    if change.tags:
        fields.append(("tags", ", ".join(change.tags)))
    if change.description is not None:
        fields.append(("description", change.description))
    if change.internal:
        fields.append(("internal", "true"))
    if change.converts:
        fields.append(("conversion", "converted to PDF in the background (apply --wait follows it)"))
    if change.action == "replace":
        fields.append(("replaces", f"asset {change.asset_id}, which stays in the service: remove it in the web app"))
    return fields


def asset_value(change: AssetChange, field: str) -> object:
    return list(change.tags) if field == "tags" else getattr(change, field)


def _value(value: object) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def create_fields(change: CreateChange) -> list[tuple[str, str]]:
    """The fields a creation sends besides the template and name, as (key, value)."""
    fields = [(k, v) for k, v in (("startDate", change.start_date), ("targetEndDate", change.target_end_date),
                                  ("actualEndDate", change.actual_end_date),
                                  ("crmOneDealId", change.crm_one_deal_id),
                                  ("crmTwoOpportunityId", change.crm_two_opportunity_id)) if v is not None]
    if change.access is not None:
        fields.append(("access", f"the final lists of {change.access_address} ride on this call"))
    return fields


def setting_text(change: SettingChange) -> str:
    before = "unknown" if change.before is None else str(change.before).lower()
    return (f"{change.kind} {change.item_id} of workspace {change.workspace_id}: "
            f"{change.field} {before} -> {str(change.after).lower()}")


def _calls(change: Change) -> str:
    calls = ", ".join(f"{c.method} {c.path}" for c in change.calls)
    return f"{len(change.calls)} call{'s' if len(change.calls) != 1 else ''}: {calls}"


def _access_lines(change: AccessChange, paint: Callable[[str, str], str]) -> list[str]:
    name = f' "{change.workspace_name}"' if change.workspace_name else ""
    where = f" ({change.location})" if change.location else ""
    calls = ", ".join(f"{c.method} {c.path}" for c in change.calls)
    mode = ("" if change.authoritative else
            " (non-authoritative: entries the manifest never listed are left alone; entries it stops listing are removed)")
    notify = " and notifies people" if change.notify else ""
    how = (f"# no call of its own: carried by the creation of {change.rides_on}" if change.rides_on else
           f"# {len(change.calls)} call{'s' if len(change.calls) != 1 else ''}{notify}: {calls}")
    lines = [
        paint(f"  # {change.address}: workspace {change.workspace_id}{name}{where}{mode}", "bold"),
        paint(f"  {how}", "dim"),
        paint("  ~ access {", "update"),
    ]
    width = max(len(e.key) for e in change.entries)
    lines += [_entry_line(e, width, paint) for e in change.entries]
    lines.append(paint("    }", "update"))
    return lines


def _entry_line(entry: EntryChange, width: int, paint: Callable[[str, str], str]) -> str:
    head = f"      {entry.action.symbol} {entry.kind:<6} {entry.key:<{width}}  "
    if entry.action is Action.CREATE:
        return paint(f"{head}{entry.after}", "create")
    if entry.action is Action.UPDATE:
        return paint(f"{head}{entry.before} -> {entry.after}", "update")
    since = f" (left the manifest; listed since {entry.managed_since})" if entry.managed_since else ""
    return paint(f"{head}{entry.before}   REMOVED: loses access{since}", "delete")
