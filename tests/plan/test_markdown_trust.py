"""A plan a reviewer can trust: values from manifests and the service cannot
make the markdown plan say something else than the plan does.

Each markdown test renders the plan, parses it with markdown-it-py (CommonMark
with GFM tables, raw HTML on, as GitHub renders a comment) and reads the
resulting HTML with the standard library's parser.  The plans are built
directly: refusing such values in manifests is validation's job, and these
tests must hold whatever validation lets through (a live list, a state file).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from reconciler.plan import render_markdown, render_text
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    Action,
    ApiCall,
    AssetChange,
    ConnectChange,
    CreateChange,
    EntryChange,
    Plan,
)

ATTACK = "newhire`|viewer|grant|x.yaml|`@evil.io"


class _Html(HTMLParser):
    """The tables (rows of cell texts), the elements opened, and the text
    outside code spans of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.tags: list[str] = []
        self.text: list[str] = []  # all the text a reader sees
        self.bare_text: list[str] = []  # text GitHub would scan for @mentions (not in code or pre)
        self._cell: list[str] | None = None
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("code", "pre"):
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if not self._code:
            self.bare_text.append(data)


def _parsed(markdown: str) -> _Html:
    parser = _Html()
    parser.feed(MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown))
    return parser


def _entry(key: str, role: str | None, before: str | None = None, location: str | None = "x.yaml:3") -> EntryChange:
    action = Action.CREATE if before is None else Action.DELETE if role is None else Action.UPDATE
    privilege = ("grant" if before is None else "revocation" if role is None else
                 "downgrade" if before == "owner" else "escalation")
    return EntryChange(kind="user", key=key, action=action, before=before, after=role, privilege=privilege,
                       flags=("owner",) if "owner" in (role, before) else (), location=location)


def _access(*entries: EntryChange, address: str = "group.acme", name: str | None = "Acme",
            reaches: tuple[str, ...] = ()) -> AccessChange:
    # The snapshots agree with the entries: the per-person view reads them.
    before = AccessSnapshot(users={e.key: e.before for e in entries if e.before is not None})
    after = AccessSnapshot(users={e.key: e.after for e in entries if e.after is not None})
    return AccessChange(address=address, workspace_id="ws_1", workspace_name=name, strategy="replace",
                        entries=entries, before=before, after=after, reaches=reaches,
                        calls=(ApiCall(method="POST", path="/workspaces/ws_1/users"),))


def _plan(*changes: object) -> Plan:
    return Plan(changes=changes)  # type: ignore[arg-type]


def _attack_plan() -> Plan:
    return _plan(_access(_entry(ATTACK, "owner"), _entry("jane@acme.com", "viewer")))


def test_an_email_forging_table_cells_stays_in_one_row_of_the_changes_table() -> None:
    parsed = _parsed(render_markdown(_attack_plan()))
    changes = next(t for t in parsed.tables if t[0] == ["", "kind", "entry", "role", "class", "where"])
    assert changes[1:] == [
        ["+", "user", ATTACK, "owner", "add: grant owner", "x.yaml:3"],
        ["+", "user", "jane@acme.com", "viewer", "add: grant", "x.yaml:3"],
    ]


def test_an_email_forging_table_cells_stays_in_one_row_of_the_per_person_section() -> None:
    parsed = _parsed(render_markdown(_attack_plan()))
    people = next(t for t in parsed.tables if t[0] == ["who", "workspace", "change", "class", "list"])
    assert people[1:] == [
        ["user jane@acme.com", 'ws_1 "Acme"', "gains viewer", "grant", "group.acme"],
        ["user " + ATTACK, 'ws_1 "Acme"', "gains owner", "grant", "group.acme"],
    ]


def test_an_email_forging_table_cells_is_one_owner_grant_in_the_review_block() -> None:
    markdown = render_markdown(_attack_plan())
    review = [line for line in markdown.splitlines() if line.startswith("> - ")]
    assert len(review) == 1
    html = MarkdownIt("commonmark").render(review[0])
    assert f"<strong>owner grant</strong> <code>group.acme</code>: user <code>{ATTACK}</code> gains owner" in html


def test_a_member_name_with_html_opens_no_element() -> None:
    name = "<img src=x onerror=alert(1)>"
    creation = CreateChange(address="group.acme.workspace.evil", group="group.acme", homepage_id="ws_1",
                            template_id="tpl_<b>x</b>", name=name, start_date="2027-01-01")
    connect = ConnectChange(address="group.acme.workspace.b", group="group.acme", homepage_id="ws_1",
                            workspace_id="ws_2", workspace_name=name, reason=f"named {name}")
    access = _access(_entry("jane@acme.com", "viewer"), name=name, reaches=(f'ws_1 "{name}"', f'new "{name}"'))
    parsed = _parsed(render_markdown(_plan(creation, connect, access)))
    assert "img" not in parsed.tags and "b" not in parsed.tags
    assert any(name in text for text in parsed.bare_text)  # shown, as text


def test_a_file_name_with_details_and_a_mention_opens_nothing_and_pings_nobody() -> None:
    asset = AssetChange(address="asset.x", action="create", asset_type="pdf", name="Deck @team",
                        file_label="assets/<details>@team.pdf", size=3, mime_type="application/pdf", digest="ab",
                        tags=("@team",), description="ask @org/admins", location="<details>@team.yaml:4")
    access = _access(_entry("jane@acme.com", "viewer", location="<details>@team.yaml:9"))
    markdown = render_markdown(Plan(changes=(asset, access), warnings=("@team: <details>please</details>",)))
    parsed = _parsed(markdown)
    assert parsed.tags.count("details") == 1  # the per-person section's own
    bare = "".join(parsed.bare_text)
    assert "@team" not in re.sub(r"\w@", "", bare) and "@org" not in bare  # each @ is in a code span
    shown = "".join(parsed.text)
    assert "assets/<details>@team.pdf" in shown and "<details>@team.yaml:9" in shown  # shown as they are
    assert "@team: <details>please</details>" in shown


def test_invisible_characters_are_shown_escaped_in_text_and_markdown() -> None:
    key = "ad\u200bmin@acme.com\u2060\ufeff\u00ad\u3164\U000e0041"
    plan = _plan(_access(_entry(key, "editor"), name="Ac\u200dme"))
    shown = "ad\\u200bmin@acme.com\\u2060\\ufeff\\xad\\u3164\\U000e0041"
    text = render_text(plan)
    html = MarkdownIt("commonmark").enable("table").render(render_markdown(plan))
    for view in (text, html):
        assert not re.search("[\u200b-\u200d\u2060\ufeff\u00ad\u3164\U000e0000-\U000e007f]", view)
        assert shown in view and "Ac\\u200dme" in view


def test_owner_grants_and_downgrades_lead_every_view_with_revocations_and_escalations() -> None:
    plan = _plan(_access(_entry("new@acme.com", "owner"), _entry("boss@acme.com", "editor", before="owner"),
                         _entry("ok@acme.com", "viewer"), _entry("gone@acme.com", None, before="viewer")))
    text = render_text(plan)
    assert "Review first: 1 revocation, 1 owner downgrade, 1 owner grant" in text
    review = text[text.index("Review first"):text.index("# group.acme")]
    assert "owner downgrade group.acme: user boss@acme.com owner -> editor [owner]" in review
    assert "owner grant group.acme: user new@acme.com gains owner [owner]" in review
    assert "ok@acme.com" not in review
    markdown = render_markdown(plan)
    assert "**Review first**: revocations, owner downgrades and owner grants of access" in markdown
    assert "> - **owner grant** `group.acme`: user `new@acme.com` gains owner `owner` (x.yaml:3)" in markdown
    entries = json.loads(plan.model_dump_json())["changes"][0]["entries"]
    assert [e["review"] for e in entries] == ["owner-grant", "owner-downgrade", None, "revocation"]


def test_a_saved_plan_recomputes_the_review_class_instead_of_reading_it() -> None:
    doc = json.loads(_plan(_access(_entry("new@acme.com", "owner"))).model_dump_json())
    doc["changes"][0]["entries"][0]["review"] = None  # edited by hand
    assert Plan.model_validate(doc).access_changes[0].entries[0].review == "owner-grant"


def test_markdown_and_text_list_changes_in_apply_order() -> None:
    connect = ConnectChange(address="group.acme.workspace.b", group="group.acme", homepage_id="ws_1",
                            workspace_id="ws_2", reason="not recorded")
    creation = CreateChange(address="group.acme.workspace.c", group="group.acme", homepage_id="ws_1",
                            template_id="tpl_1", name="C")
    access = _access(_entry("gone@acme.com", None, before="editor"))
    plan = _plan(connect, creation, access)
    markdown = render_markdown(plan)
    headings = [re.match(r"#### `([^`]+)`", line) for line in markdown.splitlines()]
    assert [m.group(1) for m in headings if m] == [c.address for c in plan.changes]
    text = render_text(plan)
    assert text.index("# group.acme.workspace.b") < text.index("# group.acme.workspace.c") < text.index(
        "# group.acme: workspace")


def test_a_creation_with_no_fields_prints_no_empty_block() -> None:
    creation = CreateChange(address="group.acme.workspace.c", group="group.acme", homepage_id="ws_1",
                            template_id="tpl_1", name="C")
    lines = render_text(_plan(creation)).splitlines()
    assert '  + workspace "C" from template tpl_1' in lines
    assert not any(line.strip() in ("{", "}") or line.endswith("{") for line in lines)


def _embed(code: str) -> AssetChange:
    return AssetChange(address="asset.booking", action="create", asset_type="embed", name="Book", custom_code=code)


def test_the_text_plan_shows_embed_code_escaped_and_cut_when_long() -> None:
    code = "<script>\x1b[2J" + "x" * 300 + "</script>"
    text = render_text(_plan(_embed(code)))
    line = next(line for line in text.splitlines() if line.startswith("      embed code"))
    assert line == f"      embed code   <script>\\x1b[2J{'x' * 188}… (121 more characters)"


def test_the_text_plan_shows_short_embed_code_whole() -> None:
    text = render_text(_plan(_embed("<iframe src='https://cal.example'></iframe>")))
    assert "      embed code   <iframe src='https://cal.example'></iframe>" in text.splitlines()


def test_the_markdown_plan_shows_embed_code_folded_in_a_block_it_cannot_close() -> None:
    code = "```\n</details><img src=x onerror=alert(1)>\n````\n@team"
    markdown = render_markdown(_plan(_embed(code)))
    parsed = _parsed(markdown)
    assert "img" not in parsed.tags and parsed.tags.count("details") == 1
    assert "@team" not in "".join(parsed.bare_text)
    html = MarkdownIt("commonmark").render(markdown)
    assert ("<pre><code class=\"language-html\">```\n&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;\n````\n"
            "@team\n</code></pre>") in html
    assert f"<summary>Embed code ({len(code)} characters)</summary>" in html
