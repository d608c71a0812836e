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
    REVIEW_ORDER,
    EntryChange,
    Plan,
    Review,
    SettingChange,
)
from reconciler.plan.cost import STORAGE_CLASS
from reconciler.plan.differences import removals
from reconciler.plan.people import entry_workspaces, people, totals, whose_list
from reconciler.text import and_list, plural, printable
from reconciler.vocabulary import DEFAULT_LIMITS, FILE_RETRIEVAL
from reconciler.gcpause import gc_paused

_ANSI = {"create": "32", "update": "33", "delete": "1;31", "bold": "1", "dim": "2"}
# The colour of each action: what is added green, changed yellow, taken away (or replaced) red.
STYLE = {Action.CREATE: "create", Action.CONNECT: "create", Action.UPDATE: "update", Action.REPLACE: "delete",
         Action.DELETE: "delete", Action.NOOP: "dim"}


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        # Every line a plan shows passes here: values from a manifest or the
        # service are made printable before our own colours are added.
        text = printable(text)
        return f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if self.color else text


def digest_line(plan: Plan) -> str:
    """The plan's digest, the value an approval names (apply --expect-digest)."""
    return f"Plan digest: {plan.plan_digest} (apply --expect-digest applies only this plan)."


@gc_paused()  # a view of 10,000 changes: a million small acyclic values (reconciler/gcpause.py)
def render_text(plan: Plan, *, color: bool = False, by_person: bool = False) -> str:
    paint = _Paint(color)
    # What only a person can settle comes first, and is never "No changes".
    doubts = [*needs_person_lines(plan, paint), ""] if plan.needs_person else []
    doubts += [*adopted_lines(plan, paint), ""] if plan.adopted else []
    if not plan.has_changes:
        checked = checked_words(plan)
        head = (f"Nothing else to change ({checked}).\n" if doubts else
                f"No changes. The service matches the manifests ({checked}).\n")
        return "".join(line + "\n" for line in doubts) + head + "".join(
            line + "\n" for line in directory_notice(plan) + unmanaged_lines(plan) + left_alone_lines(plan)
            + warning_lines(plan, paint))
    lines = [*doubts, "reconciler will make these changes:", ""]
    lines += target_notice(plan)
    lines += [*directory_notice(plan), *([""] if plan.directory else [])]
    review = review_lines(plan, paint)
    if review:
        lines += [*review, ""]
    if plan.moved:
        lines += [*(paint(f"  # {m.text}", "dim") for m in plan.moved), ""]
    for change in plan.changes:
        lines += change_lines(change, paint)
        lines.append("")
    lines.append(summary_line(plan))
    lines += removal_lines(plan, paint)
    lines.append(cost_line(plan.cost))
    lines.append(digest_line(plan))
    lines += unmanaged_lines(plan)
    lines += left_alone_lines(plan)
    lines += warning_lines(plan, paint)
    if by_person:
        lines += ["", *person_lines(plan, paint)]
    return "\n".join(lines) + "\n"


def removal_lines(plan: Plan, paint: Callable[[str, str], str]) -> list[str]:
    """Every person or domain that loses all access to a workspace, from the effects (``--max-removals``
    counts the same): a list several workspaces hold loses an entry on each."""
    found = removals(plan)
    if not found:
        return []
    head = (f"! {plural(len(found), 'access entry', 'access entries')} will be REMOVED (a person or domain losing "
            "all access to a workspace):")
    return [paint(head, "delete"), *(paint(f"!   {d.workspace}: {d.kind} {d.key} (was {d.before}; {d.cause})",
                                           "delete") for d in found)]


def checked_words(plan: Plan) -> str:
    """``2 access lists checked``, or with rules ``14 access lists checked: 2 named by a manifest, 12 by rules only``."""
    named = len(plan.unchanged)
    if not plan.rules_checked:
        return f"{plural(named, 'access list')} checked"
    return (f"{plural(named + plan.rules_checked, 'access list')} checked: {named:,} named by a manifest, "
            f"{plan.rules_checked:,} by rules only")


def unmanaged_lines(plan: Plan) -> list[str]:
    """How many workspaces of the company no manifest names, how many of
    them a rule reaches (and which, if asked)."""
    n = plan.unmanaged_count
    if not n:
        return []
    reached = plan.rules_only_count
    split = (f"; {reached:,} {'is' if reached == 1 else 'are'} reached only by rules, {n - reached:,} by neither "
             "a manifest nor a rule" if reached is not None else "")
    head = (f"{count_words(n, 'workspace')} of the company {'is' if n == 1 else 'are'} in no manifest{split}"
            f"{':' if plan.unmanaged else ' (plan --show-unmanaged lists them).'}")
    return [printable(head), *(f"  {printable(w)}" for w in plan.unmanaged)]


def left_alone_lines(plan: Plan) -> list[str]:
    """Entries of non-authoritative lists the plan leaves alone for lack of state, each named."""
    if not plan.left_alone:
        return []
    n = len(plan.left_alone)
    head = (f"Left alone for lack of state: {count_words(n, 'entry')} of non-authoritative lists "
            f"(if reconciler granted {'it' if n == 1 else 'any'} and the manifest dropped it, plan with the "
            "state to remove it):")
    return [printable(head), *(f"  {printable(e.text)}" for e in plan.left_alone)]


def directory_notice(plan: Plan) -> list[str]:
    """A plan made with the live directory says so, and how many additions to groups wait."""
    return [printable(plan.directory.text)] if plan.directory is not None else []


def target_notice(plan: Plan) -> list[str]:
    """Terraform's "resource targeting is in effect": a partial plan says so."""
    if not plan.targets:
        return []
    return [f"Note: --target is in effect ({', '.join(plan.targets)}): this plan covers only those addresses; "
            "the rest of the manifests is neither planned nor applied.", ""]


def review_found(plan: Plan) -> list[tuple[AccessChange, EntryChange]]:
    """The entries whose ``review`` class puts them first, in REVIEW_ORDER
    (revocations, owner downgrades, escalations, new owners), each class in plan order."""
    found = [(c, e) for c in plan.access_changes for e in c.entries if e.review is not None]
    return sorted(found, key=lambda item: REVIEW_ORDER.index(item[1].review or REVIEW_ORDER[0]))


def review_words(review: Review) -> str:
    """``owner-grant`` -> ``owner grant``."""
    return review.replace("-", " ")


def review_counts(found: list[tuple[AccessChange, EntryChange]]) -> list[str]:
    """``2 revocations``, ``1 owner grant``: each class with entries, in REVIEW_ORDER."""
    counts = {r: sum(1 for _, e in found if e.review == r) for r in REVIEW_ORDER}
    return [plural(n, review_words(r)) for r, n in counts.items() if n]


def review_what(entry: EntryChange, arrow: str) -> str:
    """What the entry does to its person: ``loses editor``, ``gains owner``, ``viewer -> editor``."""
    if entry.before is None:
        return f"gains {entry.after}"
    if entry.after is None:
        return f"loses {entry.before}"
    return f"{entry.before} {arrow} {entry.after}"


def review_lines(plan: Plan, paint: Callable[[str, str], str]) -> list[str]:
    """Revocations, owner downgrades, escalations and new owners: what a reviewer must read first."""
    found = review_found(plan)
    if not found:
        return []
    lines = [paint(f"Review first: {', '.join(review_counts(found))}", "bold")]
    for change, entry in found:
        workspaces = entry_workspaces(change, entry)
        on = f" on {count_words(workspaces, 'workspace')}" if workspaces is not None else ""
        label = review_words(entry.review) if entry.review else ""  # review_found keeps only entries with one
        lines.append(paint(f"  {label:<10} {change.address}: {entry.kind} {entry.key} {review_what(entry, '->')}"
                           f"{on}{flag_text(entry)}", "delete" if entry.privilege == "revocation" else "update"))
    lines += [paint(f"  {'probably the same person, not revoked:':<10} {line}", "update")
              for line in same_person_lines(plan)]
    return lines


def same_person_lines(plan: Plan) -> list[str]:
    """``user X (a +tag) like revoked Y, on ws_1, ws_2``: each address that is
    probably a revoked user, spelled so a look-alike does not print as the original."""
    from reconciler.plan.lookalikes import spelled

    return [f"user {spelled(p.key)} ({p.why}), like {p.revoked}, keeps access on {', '.join(p.workspaces)}"
            for p in plan.probably_same_person]


def needs_person_heading(plan: Plan) -> str:
    """``1 resource needs a person``, ``2 resources need a person``."""
    n = len(plan.needs_person)
    return f"{count_words(n, 'resource')} need{'s' if n == 1 else ''} a person"


def needs_person_lines(plan: Plan, paint: Callable[[str, str], str]) -> list[str]:
    """Each resource whose outcome is unknown: what happened, what to look
    for, and the command for each finding (also apply's last words)."""
    if not plan.needs_person:
        return []
    lines = [paint(f"{needs_person_heading(plan)} (nothing is sent for "
                   f"{'it' if len(plan.needs_person) == 1 else 'them'} until then):", "bold")]
    for item in plan.needs_person:
        where = f" ({item.location})" if item.location else ""
        lines.append(paint(f"  {item.address}{where}: {item.reason}.", "delete"))
        lines.append(paint(f"    {item.check}", "update"))
        width = max((len(r.when) for r in item.resolutions), default=0) + 4
        lines += [paint(f"    {'If ' + r.when + ':':<{width}} {r.command}", "update") for r in item.resolutions]
    return lines


def adopted_lines(plan: Plan, paint: Callable[[str, str], str]) -> list[str]:
    """The creations of an interrupted apply found again by their intent (also apply's words)."""
    if not plan.adopted:
        return []
    lines = [paint(f"{count_words(len(plan.adopted), 'workspace')} created by an interrupted apply, found again "
                   "by its recorded intent (apply records it; no call, no credit):", "bold")]
    lines += [paint(f"  {a.address}{f' ({a.location})' if a.location else ''}: {a.reason}", "create")
              for a in plan.adopted]
    return lines


def flag_text(entry: EntryChange) -> str:
    return "".join(f" [{flag}]" for flag in entry.flags)


def person_lines(plan: Plan, paint: Callable[[str, str], str]) -> list[str]:
    """``--by-person``: each user and domain, and what it gains, loses or changes where."""
    found = people(plan)
    if not found:
        return ["By person: nobody's access changes."]
    sums = totals(found)
    counted = ", ".join(count_words(sums[p], p) for p in ("grant", "escalation", "downgrade", "revocation"))
    lines = [paint(f"By person: {count_words(len(found), 'person or domain')}; on workspaces: {counted}", "bold")]
    lines += [paint(f"  {summary}", "delete") for summary in (p.loss_summary() for p in found) if summary]
    for person in found:
        lines.append(paint(f"  {person.kind} {person.key}", "bold"))
        for c in person.changes:
            role = (f"gains {c.after}" if c.before is None else f"loses {c.before}" if c.after is None else
                    f"{c.before} -> {c.after}")
            lines.append(paint(f"    {c.privilege:<10} {c.workspace}: {role} ({c.address})",
                               "delete" if c.privilege == "revocation" else "update"))
    return lines


def count_words(n: int, word: str) -> str:
    """``1 grant``, ``2 grants`` (reconciler.text.plural, with the plan's irregular nouns)."""
    return plural(n, word, _PLURALS.get(word))


_PLURALS = {"person": "people", "person or domain": "people or domains", "entry": "entries"}


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
        line += f"; {plural(s.settings, 'section/page/task value')} to set"
    assets = [f"{n} {what}" for n, what in ((s.assets_created, "to create"), (s.assets_replaced, "to replace"),
                                           (s.assets_updated, "to update")) if n]
    if assets:
        line += f"; assets: {', '.join(assets)}"
    if plan.moved:
        line += f"; {plural(len(plan.moved), 'address', 'addresses')} to move in the state"
    return line + "."


def cost_line(cost: Cost) -> str:
    """What applying costs, as sentences a reviewer reads aloud."""
    parts = [_class_words(cls, n, cost) for cls, n in cost.calls_by_class.items()]
    sentence = f"Cost: {count_words(cost.total_calls, 'API call')}" + (f": {and_list(parts)}" if parts else "")
    if cost.refresh_reads:
        sentence += f", {cost.refresh_reads} of them re-reading the lists before and after writing"
    credits = cost.workspace_credits
    sentence += f"; {count_words(credits, 'workspace credit') if credits else 'no workspace credits'}."
    if cost.min_seconds:
        sentence += f" The rate limits make it take at least {_duration(cost.min_seconds)}."
    n = cost.conversion_polls
    if n:
        sentence += (f" With apply --wait, at least {plural(n, 'more call')} in the {FILE_RETRIEVAL} "
                     f"class ({_limit(FILE_RETRIEVAL, cost)}/min) follow{'s' if n == 1 else ''} the conversion of {count_words(n, 'file')}.")
    return sentence


def _class_words(cls: str, n: int, cost: Cost) -> str:
    if cls == STORAGE_CLASS:
        return f"{plural(n, 'upload')} to the storage provider (outside the service's limits)"
    return f"{n} in the {cls} rate class ({_limit(cls, cost)}/min)"


def _limit(cls: str, cost: Cost) -> int | None:
    """The requests per minute the plan's least time assumed for ``cls``."""
    return cost.limits.get(cls, DEFAULT_LIMITS.get(cls))


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:g} min" if seconds >= 60 else f"{seconds:g} s"


def change_lines(change: Change, paint: Callable[[str, str], str]) -> list[str]:
    """The lines of one change: a header naming it, its calls, then what it does."""
    if isinstance(change, AccessChange):
        return _access_lines(change, paint)
    where = f" ({change.location})" if change.location else ""
    mark, style = change.action.symbol, STYLE[change.action]
    if isinstance(change, CreateChange):
        head = [paint(f"  # {change.address}: new workspace in {change.group}{where}", "bold"),
                paint(f"  # {_calls(change)}; uses {plural(change.credits, 'workspace credit')}", "dim")]
        title = f'  {mark} workspace "{change.name}" from template {change.template_id}'
        fields = create_fields(change)
        if not fields:  # nothing but the template and the name: no empty { } block
            return [*head, paint(title, style)]
        return [*head, paint(f"{title} {{", style),
                *(paint(f"      {key:<14} {value}", style) for key, value in fields), paint("    }", style)]
    if isinstance(change, AssetChange):
        return _asset_lines(change, where, paint)
    if isinstance(change, ConnectChange):
        name = f' "{change.workspace_name}"' if change.workspace_name else ""
        return [
            paint(f"  # {change.address}: workspace {change.workspace_id}{name}{where}", "bold"),
            paint(f"  # {_calls(change)}; {change.reason}", "dim"),
            paint(f"  {mark} connect to {change.group} (homepage {change.homepage_id})", style),
        ]
    return [
        paint(f"  # {change.address}{where}", "bold"),
        paint(f"  # {_calls(change)}{'; ' + change.reason if change.reason else ''}", "dim"),
        paint(f"  {mark} {setting_text(change)}", style),
    ]


def _asset_lines(change: AssetChange, where: str, paint: Callable[[str, str], str]) -> list[str]:
    head = [paint(f"  # {change.address}{where}", "bold"),
            paint(f"  # {_calls(change)}{'; ' + change.reason if change.reason else ''}", "dim")]
    symbol, style = change.action.symbol, STYLE[change.action]
    if change.action is Action.UPDATE:
        rows = [(f, f"{_value(change.before.get(f))} -> {_value(asset_value(change, f))}") for f in change.patch]
        return [*head, paint(f"  {symbol} asset {change.asset_id} {{", style),
                *(paint(f"      {k:<12} {v}", style) for k, v in rows), paint("    }", style)]
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
    if change.custom_code is not None:
        fields.append(("embed code", embed_preview(change.custom_code)))
    if change.internal:
        fields.append(("internal", "true"))
    if change.converts:
        fields.append(("conversion", "converted to PDF in the background (apply --wait follows it)"))
    if change.action is Action.REPLACE:
        fields.append(("replaces", f"asset {change.asset_id}, which stays in the service: remove it in the web app"))
    return fields


EMBED_PREVIEW = 200  # characters of embed code a one-line view shows


def embed_preview(code: str, limit: int = EMBED_PREVIEW) -> str:
    """The embed code a new asset carries, on one line (escaped by the
    renderer), cut after ``limit`` characters: ``<iframe src=…… (1,204 more characters)``."""
    if len(code) <= limit:
        return code
    return f"{code[:limit]}… ({plural(len(code) - limit, 'more character')})"


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
    fields = [(k, str(v)) for k, v in (("startDate", change.start_date), ("targetEndDate", change.target_end_date),
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
    return f"{plural(len(change.calls), 'call')}: {calls}"


def _access_lines(change: AccessChange, paint: Callable[[str, str], str]) -> list[str]:
    name = f' "{change.workspace_name}"' if change.workspace_name else ""
    where = f" ({change.location})" if change.location else ""
    calls = ", ".join(f"{c.method} {c.path}" for c in change.calls)
    mode = ("" if change.authoritative else
            f" (in no manifest; only the entries of {_rules_words(change.rules)} are added, re-roled or removed, "
            "the rest of the list is kept)" if change.governs == "rules" else
            " (non-authoritative: entries the manifest never listed are left alone; entries it stops listing are removed)")
    notify = f" and notifies {count_words(len(change.notified), 'person')}" if change.notify else ""
    how = (f"# no call of its own: {change.reason}" if change.governs in ("join", "create") else
           f"# no call of its own: carried by the creation of {change.rides_on}" if change.rides_on else
           f"# no call of its own: {carried_text(change)}" if change.carried_by else
           f"# {plural(len(change.calls), 'call')}{notify}: {calls}"
           + (f"; {carried_text(change)}" if change.carries else ""))
    lines = [
        paint(f"  # {change.address}: workspace {change.workspace_id or 'new'}{name}{where}{mode}", "bold"),
        paint(f"  {how}", "dim"),
    ]
    if len(change.reaches) > 1:
        lines.append(paint(f"  # {whose_list(change)} reaches {len(change.reaches)} workspaces: "
                           f"{', '.join(change.reaches)}", "dim"))
    if change.notified:
        lines.append(paint(f"  # emails {', '.join(change.notified)}", "dim"))
    lines.append(paint(f"  {change.action.symbol} access {{", STYLE[change.action]))
    width = max(len(e.key) for e in change.entries)
    lines += [_entry_line(e, width, paint, joined=change.governs == "join") for e in change.entries]
    lines.append(paint("    }", STYLE[change.action]))
    return lines


def carried_text(change: AccessChange) -> str:
    """What a change of one list the service shares with another list of the manifests says of its write."""
    if change.carried_by:
        return (f"the service holds this list and {change.carried_by}'s as one (connected by hand), and "
                f"{change.carried_by}'s call writes these entries with its own")
    return (f"the service holds this list and {and_list(list(change.carries))}'s as one (connected by hand): this "
            "call writes their entries too")


def _rules_words(rules: tuple[str, ...]) -> str:
    """``rule baseline``, ``rules baseline and offboarded``, or ``rules no longer matching it``."""
    if not rules:
        return "rules no longer matching it"
    return f"rule {rules[0]}" if len(rules) == 1 else f"rules {and_list(list(rules))}"


def _entry_line(entry: EntryChange, width: int, paint: Callable[[str, str], str], *, joined: bool = False) -> str:
    head = f"      {entry.action.symbol} {entry.kind:<6} {entry.key:<{width}}  "
    tail = f"{flag_text(entry)}" + (f"  ({entry.why})" if entry.why else "")
    if entry.action is Action.CREATE:
        return paint(f"{head}{entry.after}{tail}", "create")
    if entry.action is Action.UPDATE:
        return paint(f"{head}{entry.before} -> {entry.after}  ({entry.privilege}){tail}", "update")
    since = f" (left the manifest; listed since {entry.managed_since})" if entry.managed_since else ""
    loss = entry.reason if joined else "loses access"  # a join's loss says why: the group's list replaces its own
    return paint(f"{head}{entry.before}   REMOVED: {loss}{since}{tail}", "delete")
