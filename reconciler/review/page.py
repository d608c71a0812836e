"""``review page``: one self-contained page where a reviewer decides their items.

No server and no network (the Content-Security-Policy allows nothing to
leave): the reviewer picks their name, filters their items, marks each keep
or revoke with a reason, sees how many are decided, and downloads their file
to commit.  The file is written by ``page.js``'s ``scalar``/``fileText``,
the same rule as ``reconciler.review.yaml_out`` (a test compares the bytes).

The campaign's items sit in an inline JSON block written by the access
report's ``script_json`` (nothing in it can end its ``<script>``), and the
script sets every value with ``textContent``: names and emails come from the
service, so they are never markup.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from reconciler.manifest.desired import DesiredCampaign


def page_data(campaign: DesiredCampaign) -> dict[str, Any]:
    """What the script reads: the campaign, and per reviewer their items as their file holds them."""
    reviewers: dict[str, list[dict[str, Any]]] = {reviewer: [] for reviewer, _ in campaign.reviewer_files}
    for item in campaign.items:
        reviewers.setdefault(item.reviewer, []).append({
            "workspace": item.workspace, "name": item.name, "kind": item.kind, "key": item.key, "role": item.role,
            "why": item.why, "decision": item.decision, "reason": item.reason,
            "removeFromTeam": item.remove_from_team})
    return {"campaign": campaign.name, "due": campaign.due.isoformat(),
            "reviewers": [{"reviewer": r, "items": items} for r, items in reviewers.items()]}


def render_review_page(campaign: DesiredCampaign) -> str:
    from reconciler.report.html import page_css, script_json, text

    script = resources.files("reconciler.review").joinpath("page.js").read_text(encoding="utf-8")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        f"<title>Access review {text(campaign.name)}</title><style>{page_css()}"
        ".decide button[aria-pressed=true] { background: var(--internal); color: #fff; }"
        ".decide button.revoke[aria-pressed=true] { background: var(--warn); }</style></head><body>",
        f"<header><h1>Access review {text(campaign.name)}</h1><p class=\"meta\">Due {campaign.due.isoformat()}. "
        "Pick your name, decide each item (keep or revoke, with a reason), then download your file and commit "
        "it in place of reviews/" + text(campaign.name) + "/&lt;your email&gt;.yaml. Nothing leaves this page."
        "</p></header><main>",
        "<section class=\"controls\"><label>Reviewer <select id=\"reviewer\"></select></label>",
        "<input type=\"search\" id=\"filter\" placeholder=\"Filter by workspace, email or domain\">",
        "<label><input type=\"checkbox\" id=\"open-only\"> undecided only</label>",
        "<span id=\"progress\" class=\"note\"></span>",
        "<button type=\"button\" id=\"download\">Download my file</button></section>",
        "<table><thead><tr><th>Workspace</th><th>Entry</th><th>Role</th><th>Why it is there</th><th>Decision</th>"
        "<th>Reason</th></tr></thead><tbody id=\"items\"></tbody></table>",
        "</main><footer>Made by <code>reconciler review page</code>.</footer>",
        f"<script type=\"application/json\" id=\"review-data\">{script_json(page_data(campaign))}</script>",
        f"<script>{script}</script></body></html>\n"])
