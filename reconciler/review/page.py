"""``review page``: one self-contained page where a reviewer decides their items.

No server and no network (the Content-Security-Policy allows nothing to
leave): the reviewer picks their name, filters their items, marks each keep
or revoke with a reason, sees how many are decided, and downloads their file
to commit.  The file is written by ``page.js``'s ``scalar``/``fileText``,
the same rule as ``reconciler.review.yaml_out`` (a test compares the bytes).

The page keeps the reviewer's decisions in the browser (``localStorage``)
under the campaign's name and its seal (``seal``): a reload finds them, and
another campaign, or one started again, never does.  Each item says what its
decision will do, from the company as ``review page`` read it: the other
workspaces that hold the same list (a decision there is one for all of them),
the rule that ensures the entry (a revoke will not hold), and, for a domain,
that it lets in everyone at that domain (how many people is not known).

The campaign's items sit in an inline JSON block written by the access
report's ``script_json`` (nothing in it can end its ``<script>``), and the
script sets every value with ``textContent``: names and emails come from the
service, so they are never markup.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any, NamedTuple

from reconciler.company.model import CompanyAccess
from reconciler.manifest.desired import Desired, DesiredCampaign, DesiredRule
from reconciler.manifest.review_meaning import Entry, entry_of
from reconciler.manifest.reviews import items_digest


class Consequences(NamedTuple):
    """What the page says a decision will do, read from the company when the page is made."""

    lists: list[list[str]]  # each list two or more workspaces hold: their labels (``ws_1 "Name"``), in id order
    list_of: dict[str, int]  # workspace id -> index into ``lists``
    ensured: dict[Entry, list[str]]  # (workspace id, kind, key) -> the rules ensuring it there


def consequences(desired: Desired, company: CompanyAccess, shared: Sequence[Sequence[str]]) -> Consequences:
    """``shared``: the workspace ids of each list several workspaces hold (a group's, or one connected by
    hand: the same entry ids), as ``reconciler.live.one_list_each`` groups them."""
    names = {w.id: w.name for w in company.workspaces}
    lists: list[list[str]] = []
    list_of: dict[str, int] = {}
    for ids in shared:
        if len(ids) < 2:
            continue
        for workspace_id in ids:
            list_of[workspace_id] = len(lists)
        lists.append([f'{w} "{names[w]}"' if names.get(w) else w for w in ids])
    rules = {r.key: r for r in desired.rules}
    teams = {t.key: t.emails() for t in desired.teams}
    ensures = {key: _ensured_keys(rule, teams) for key, rule in rules.items()}
    ensured: dict[tuple[str, str, str], list[str]] = {}
    for workspace in company.workspaces:
        for rule_key in workspace.rules:
            for kind, key, location in ensures.get(rule_key, ()):
                ensured.setdefault((workspace.id, kind, key), []).append(f"rule {rule_key} ({location})")
    return Consequences(lists, list_of, ensured)


def _ensured_keys(rule: DesiredRule, teams: dict[str, tuple[str, ...]]) -> list[tuple[str, str, str]]:
    """(kind, key, file:line) of every entry the rule ensures, its teams' members included."""
    found = [("user", u.email, f"{u.location.file}:{u.location.line}") for u in rule.ensure_users]
    found += [("domain", d.domain, f"{d.location.file}:{d.location.line}") for d in rule.ensure_domains]
    found += [("user", member, f"{t.location.file}:{t.location.line}")
              for t in rule.ensure_teams for member in teams.get(t.team, ())]
    return found


def seal(campaign: DesiredCampaign) -> str:
    """sha256 of the campaign as review start sealed it: its name, start and due dates, and each reviewer's
    items (the assignment's digests, which the loader has checked the files against).  The page keeps its
    decisions under it: another campaign, or one started again on another company or day, has another."""
    per_reviewer: dict[str, list[tuple[str, str, str, str]]] = {}
    for item in campaign.items:
        per_reviewer.setdefault(item.reviewer, []).append((item.workspace, item.kind, item.key, item.role))
    canonical = json.dumps([campaign.name, campaign.started.isoformat(), campaign.due.isoformat(),
                            sorted((r, items_digest(i)) for r, i in per_reviewer.items())],
                           separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def page_data(campaign: DesiredCampaign, found: Consequences | None = None) -> dict[str, Any]:
    """What the script reads: the campaign, its seal, the shared lists, and per reviewer their items as their
    file holds them, each with what its decision will do (``list``: index into ``lists``; ``ensured``)."""
    found = found or Consequences([], {}, {})
    reviewers: dict[str, list[dict[str, Any]]] = {reviewer: [] for reviewer, _ in campaign.reviewer_files}
    for item in campaign.items:
        reviewers.setdefault(item.reviewer, []).append({
            "workspace": item.workspace, "name": item.name, "kind": item.kind, "key": item.key, "role": item.role,
            "why": item.why, "decision": item.decision, "reason": item.reason,
            "removeFromTeam": item.remove_from_team, "list": found.list_of.get(item.workspace),
            "ensured": found.ensured.get(entry_of(item), [])})
    return {"campaign": campaign.name, "due": campaign.due.isoformat(), "seal": seal(campaign),
            "lists": found.lists, "reviewers": [{"reviewer": r, "items": items} for r, items in reviewers.items()]}


_STYLE = (
    ".decide button[aria-pressed=true] { background: var(--internal); color: #fff; }"
    ".decide button.revoke[aria-pressed=true] { background: var(--warn); }"
    ".effects { font-size: 13px; } .effects p { margin: 2px 0; }"
    ".will-not-hold { color: var(--warn); display: block; font-size: 12px; }"
    ".conflict { color: var(--warn); }")


def render_review_page(campaign: DesiredCampaign, found: Consequences | None = None) -> str:
    from reconciler.report.html import page_css, script_json, text

    script = resources.files("reconciler.review").joinpath("page.js").read_text(encoding="utf-8")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        f"<title>Access review {text(campaign.name)}</title><style>{page_css()}{_STYLE}</style></head><body>",
        f"<header><h1>Access review {text(campaign.name)}</h1><p class=\"meta\">Due {campaign.due.isoformat()}. "
        "Pick your name, decide each item (keep or revoke, with a reason), then download your file and commit "
        "it in place of reviews/" + text(campaign.name) + "/&lt;your email&gt;.yaml. Nothing leaves this page; "
        "this browser keeps your decisions until you download and commit them (or forget them)."
        "</p></header><main>",
        "<section class=\"controls\"><label>Reviewer <select id=\"reviewer\"></select></label>",
        "<input type=\"search\" id=\"filter\" placeholder=\"Filter by workspace, email or domain\">",
        "<label><input type=\"checkbox\" id=\"open-only\"> undecided only</label>",
        "<span id=\"progress\" class=\"note\"></span>",
        "<button type=\"button\" id=\"download\">Download my file</button>",
        "<button type=\"button\" id=\"forget\">Forget my decisions</button>",
        "<span id=\"kept\" class=\"note\"></span></section>",
        "<table><thead><tr><th>Workspace</th><th>Entry</th><th>Role</th><th>Why it is there</th><th>Decision</th>"
        "<th>What it does</th><th>Reason</th></tr></thead><tbody id=\"items\"></tbody></table>",
        "</main><footer>Made by <code>reconciler review page</code>.</footer>",
        f"<script type=\"application/json\" id=\"review-data\">{script_json(page_data(campaign, found))}</script>",
        f"<script>{script}</script></body></html>\n"])
