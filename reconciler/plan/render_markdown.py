"""Draw a Plan as a pull-request comment: a summary table, the changes in
the order apply makes them, then the per-person view.

Reads the Plan and nothing else, like the text renderer, so a reviewer sees
in the PR exactly what ``apply --plan`` would do.

Every value that comes from a manifest or the service (emails, domains,
names, addresses, ids, file names, reasons, warnings) goes through
``md_code`` or ``md_text`` (reconciler.text) where it is interpolated: it
shows as its own characters and can neither split a table row, nor open
HTML, a link or a heading, nor mention anyone.  Our own words and numbers
are written as they are.
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
    REVIEW_ORDER,
    Plan,
    SettingChange,
)
from reconciler.plan.people import Person, entry_workspaces, people, totals, whose_list
from reconciler.plan.render_text import (
    asset_fields,
    carried_text,
    asset_value,
    checked_words,
    cost_line,
    count_words,
    left_alone_lines,
    create_fields,
    review_found,
    review_what,
    review_words,
    same_person_lines,
    needs_person_heading,
    summary_line,
)
from reconciler.text import and_list, md_code, md_fenced, md_text, plural, printable
from reconciler.gcpause import gc_paused

_WORDS = {Action.CREATE: "add", Action.UPDATE: "change role", Action.DELETE: "**REMOVE**"}
# Embed code longer than this is cut in the comment (GitHub refuses a comment
# over 65,536 characters); the JSON plan has all of it.
EMBED_SHOWN = 10_000


@gc_paused()  # a view of 10,000 changes: a million small acyclic values (reconciler/gcpause.py)
def render_markdown(plan: Plan) -> str:
    if not plan.has_changes and (plan.needs_person or plan.adopted):
        heading = needs_person_heading(plan) if plan.needs_person else "adoptions to record"
        lines = [f"### reconciler plan: {heading}", "", *_needs_person_block(plan), *_adopted_block(plan),
                 f"Nothing else to change ({checked_words(plan)}).", ""]
        return ("\n".join(printable(line) for line in [*lines, _digest(plan), ""]) + _left_alone_block(plan)
                + _warning_block(plan))
    if not plan.has_changes:
        return (f"### reconciler plan: no changes\n\nThe service matches the manifests "
                f"({checked_words(plan)}).\n\n{_digest(plan)}\n" + _directory_block(plan) + _left_alone_block(plan)
                + _warning_block(plan))
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
        lines += [f"> [!IMPORTANT]\n> Note: --target is in effect ({', '.join(md_code(t) for t in plan.targets)}): "
                  "this plan covers only those addresses; the rest of the manifests is neither planned nor applied.",
                  ""]
    if plan.directory is not None:
        lines += [f"> [!IMPORTANT]\n> {md_text(plan.directory.text)}", ""]
    lines += _needs_person_block(plan)
    lines += _adopted_block(plan)
    lines += _review_block(plan)
    lines += [*(f"- **moved** {md_code(m.previous_address)} → {md_code(m.address)} ({md_text(m.detail)}): "
                "only the state changes, no call is made" for m in plan.moved), *([""] if plan.moved else [])]
    # In plan order, which is apply's: the review block above already leads with what to read first.
    for change in plan.changes:
        lines += _change_block(change)
    lines += [md_text(summary_line(plan)), "", md_text(cost_line(plan.cost)), "", _digest(plan), ""]
    lines += _people_block(plan)
    return "\n".join(printable(line, multiline=True) for line in lines) + _left_alone_block(plan) + _warning_block(plan)


def _directory_block(plan: Plan) -> str:
    return f"\n> [!IMPORTANT]\n> {md_text(plan.directory.text)}\n" if plan.directory is not None else ""


def _digest(plan: Plan) -> str:
    """The digest line, one a workflow can find again: ``Plan digest: `HEX```."""
    return f"Plan digest: `{plan.plan_digest}`"


def _review_block(plan: Plan) -> list[str]:
    """Revocations, owner downgrades, escalations and new owners, each with its address and file:line."""
    found = review_found(plan)
    if not found:
        return []
    classes = [review_words(r) + "s" for r in REVIEW_ORDER if any(e.review == r for _, e in found)]
    lines = ["> [!WARNING]", f"> **Review first**: {and_list(classes)} of access"]
    for change, e in found:
        workspaces = entry_workspaces(change, e)
        on = f" on {count_words(workspaces, 'workspace')}" if workspaces is not None else ""
        flags = "".join(f" {md_code(f)}" for f in e.flags)
        where = f" ({md_text(e.location)})" if e.location else ""
        label = review_words(e.review) if e.review else ""  # review_found keeps only entries with one
        lines.append(f"> - **{label}** {md_code(change.address)}: {e.kind} {md_code(e.key)} "
                     f"{_what(e)}{on}{flags}{where}")
    lines += [f"> - **probably the same person, not revoked**: {md_text(line)}" for line in same_person_lines(plan)]
    return [*lines, ""]


def _what(entry: EntryChange) -> str:
    """``loses editor``, ``gains owner``, ``viewer → editor``, each role escaped."""
    return md_text(review_what(entry, "→"))


def _needs_person_block(plan: Plan) -> list[str]:
    """Resources whose outcome is unknown, first under "Review first", each
    with what to look for and the command for each finding."""
    if not plan.needs_person:
        return []
    lines = ["> [!WARNING]", f"> **Review first**: {needs_person_heading(plan)}; nothing is sent for "
             f"{'it' if len(plan.needs_person) == 1 else 'them'} until then"]
    for item in plan.needs_person:
        where = f" ({md_text(item.location)})" if item.location else ""
        lines.append(f"> - {md_code(item.address)}{where}: {md_text(item.reason)}. {md_text(item.check)}")
        lines += [f">   - if {md_text(r.when)}: {md_code(r.command)}" for r in item.resolutions]
    return [*lines, ""]


def _adopted_block(plan: Plan) -> list[str]:
    """Creations of an interrupted apply found again by their intent: recorded, no call."""
    if not plan.adopted:
        return []
    lines = [f"**Adopted** (created by an interrupted apply, found again by its recorded intent; apply records "
             f"{'it' if len(plan.adopted) == 1 else 'them'}, no call, no credit):"]
    lines += [f"- {md_code(a.address)}{f' ({md_text(a.location)})' if a.location else ''}: {md_text(a.reason)}"
              for a in plan.adopted]
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
             *_loss_lines(found),
             "| who | workspace | change | class | list |", "|---|---|---|---|---|"]
    for person in found:
        for c in person.changes:
            role = (f"gains {c.after}" if c.before is None else f"loses {c.before}" if c.after is None else
                    f"{c.before} → {c.after}")
            lines.append(f"| {person.kind} {md_code(person.key, cell=True)} | {md_text(c.workspace)} | "
                         f"{md_text(role)} | {c.privilege} | {md_code(c.address, cell=True)} |")
    return [*lines, "", "</details>", ""]


def _loss_lines(found: list[Person]) -> list[str]:
    """Who loses access through a team or rule, and how often through which: a list before the table."""
    summaries = [summary for summary in (p.loss_summary() for p in found) if summary]
    return [*(f"- {md_text(summary)}" for summary in summaries), ""] if summaries else []


def _left_alone_block(plan: Plan) -> str:
    """Entries of non-authoritative lists left alone for lack of state, as in the text view."""
    lines = left_alone_lines(plan)
    if not lines:
        return ""
    rows = "".join(f"> - {e.kind} {md_code(e.key)} {md_text(e.role)} on {md_code(e.address)}: not listed; no state "
                   "says whether reconciler granted it\n" for e in plan.left_alone)
    return printable(f"\n> [!CAUTION]\n> {md_text(lines[0])}\n{rows}", multiline=True)


def _warning_block(plan: Plan) -> str:
    if not plan.warnings:
        return ""
    return "\n> [!NOTE]\n> Warnings:\n" + "".join(f"> - {md_text(w)}\n" for w in plan.warnings)


def _change_block(change: Change) -> list[str]:
    where = f" ({md_text(change.location)})" if change.location else ""
    if isinstance(change, AccessChange):
        return _access_block(change)
    if isinstance(change, CreateChange):
        fields = "".join(f"; {key} {md_code(value)}" for key, value in create_fields(change))
        return [f"#### {md_code(change.address)}: **{change.action.value}** workspace “{md_text(change.name)}” from template "
                f"{md_code(change.template_id)} in {md_code(change.group)} "
                f"({plural(change.credits, 'credit')}){fields}{where}", ""]
    if isinstance(change, AssetChange):
        return _asset_block(change, where)
    if isinstance(change, ConnectChange):
        return [f"#### {md_code(change.address)}: **{change.action.value}** workspace {md_code(change.workspace_id)} to "
                f"{md_code(change.group)} (homepage {md_code(change.homepage_id)}){where}", "",
                md_text(change.reason), ""]
    return [f"#### {md_code(change.address)}: {_setting(change)}{where}", ""]


def _setting(change: SettingChange) -> str:
    before = "unknown" if change.before is None else str(change.before).lower()
    return (f"{change.kind} {md_text(change.item_id)} of workspace {md_text(change.workspace_id)}: "
            f"{change.field} {before} -> {str(change.after).lower()}")


def _asset_title(change: AssetChange) -> str:
    """``asset pdf "Pricing" from assets/p.pdf``, each value escaped."""
    name = f' "{md_text(change.name)}"' if change.name else ""
    source = (f" from {md_text(change.file_label)}" if change.file_label else
              f" of {md_text(change.url)}" if change.url else " with custom embed code")
    return f"asset {md_text(change.asset_type)}{name}{source}"


def _asset_block(change: AssetChange, where: str) -> list[str]:
    verb = f"**{change.action.value}**"
    if change.action is Action.UPDATE:
        rows = [f"| {f} | {_cell(change.before.get(f))} | {_cell(asset_value(change, f))} |" for f in change.patch]
        return [f"#### {md_code(change.address)}: {verb} asset {md_code(change.asset_id)}{where}", "",
                "| field | last applied | manifest |", "|---|---|---|", *rows, ""]
    # The embed code has a block of its own below, whole and fenced.
    rows = [f"| {k} | {md_text(v)} |" for k, v in asset_fields(change) if k != "embed code"]
    table = ["| | |", "|---|---|", *rows, ""] if rows else []
    return [f"#### {md_code(change.address)}: {verb} {_asset_title(change)}{where}", "", *table,
            *_embed_block(change)]


def _embed_block(change: AssetChange) -> list[str]:
    """The embed code, folded, in a code block nothing in it can close."""
    code = change.custom_code
    if code is None:
        return []
    shown, rest = code[:EMBED_SHOWN], len(code) - EMBED_SHOWN
    cut = [f"… ({plural(rest, 'more character')}: the JSON plan has them all)", ""] if rest > 0 else []
    return ["<details>", f"<summary>Embed code ({plural(len(code), 'character')})</summary>", "",
            md_fenced(shown, "html"), "", *cut, "</details>", ""]


def _cell(value: object) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, list):
        return ", ".join(md_code(v, cell=True) for v in value) or "(none)"
    return md_code(str(value).lower() if isinstance(value, bool) else value, cell=True)


def _access_block(change: AccessChange) -> list[str]:
    mode = ("" if change.authoritative else
            f" (in no manifest: rules {', '.join(md_code(r) for r in change.rules)} only)" if change.governs == "rules"
            else " (non-authoritative)")
    name = f" “{md_text(change.workspace_name)}”" if change.workspace_name else ""
    rides = ([f"No call of its own: {md_text(change.reason)}.", ""] if change.governs in ("join", "create") else
             [f"Carried by the creation of {md_code(change.rides_on)} (no call of its own).", ""]
             if change.rides_on else
             [f"{'No call of its own: ' if change.carried_by else ''}{md_text(carried_text(change))}.", ""]
             if change.carried_by or change.carries else [])
    reaches = ([f"{whose_list(change).capitalize()} reaches {len(change.reaches)} workspaces: "
                f"{', '.join(md_text(r) for r in change.reaches)}.", ""] if len(change.reaches) > 1 else [])
    notifies = ([f"Notifies {count_words(len(change.notified), 'person')} by email: "
                 f"{', '.join(md_code(e) for e in change.notified)}.", ""] if change.notified else [])
    where = f" ({md_text(change.location)})" if change.location else ""
    lines = [
        f"#### {md_code(change.address)}: workspace {md_code(change.workspace_id or 'new')}{name}{mode}{where}",
        "",
        *rides,
        *reaches,
        *notifies,
        "| | kind | entry | role | class | where |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_row(e, joined=change.governs == "join") for e in change.entries]
    lines.append("")
    return lines


def _row(entry: EntryChange, *, joined: bool = False) -> str:
    if entry.action is Action.UPDATE:
        role = f"{md_text(entry.before)} → {md_text(entry.after)}"
    else:
        role = md_text(entry.after) if entry.action is Action.CREATE else f"~~{md_text(entry.before)}~~"
    flags = "".join(f" {md_code(f, cell=True)}" for f in entry.flags)
    return (f"| `{entry.action.symbol}` | {entry.kind} | {md_code(entry.key, cell=True)} | {role} | "
            f"{_WORDS[entry.action]}: {entry.privilege}{flags} | {_where(entry, joined=joined)} |")


def _where(entry: EntryChange, *, joined: bool = False) -> str:
    """The entry's manifest line, and the team or rule behind it."""
    parts = [md_text(entry.location)] if entry.location else []
    if joined:  # what the join does to it: the group's list replaces the workspace's own
        parts.append(md_text(entry.reason))
    if entry.why:
        parts.append(md_text(entry.why))
    return "; ".join(parts)
