"""reconciler.text: invisible characters escaped; the Markdown escapes hold
whatever the value (checked by rendering with markdown-it-py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from reconciler.plan.model import ConnectChange
from reconciler.apply.progress import finished_line
from reconciler.text import md_code, md_fenced, md_text, printable

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


@pytest.mark.parametrize("raw, shown", [
    ("ad\u200bmin", "ad\\u200bmin"),
    ("a\u200c\u200db", "a\\u200c\\u200db"),
    ("x\u2060y\ufeff", "x\\u2060y\\ufeff"),
    ("soft\u00adhyphen", "soft\\xadhyphen"),
    ("\u3164", "\\u3164"),
    ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"),
])
def test_invisible_characters_are_escaped(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_a_progress_line_shows_invisible_characters_escaped() -> None:
    change = ConnectChange(address="group.a\u200b.workspace.b", group="group.a", homepage_id="ws_1",
                           workspace_id="ws_2")
    assert finished_line(1, 2, change, 1, 0) == "[1/2] group.a\\u200b.workspace.b: connected (1 call)"


def _cells(row: str) -> list[str]:
    html = MD.render(f"| a | b |\n|---|---|\n{row}\n")
    body = html[html.index("<tbody>"):]
    return re.findall(r"<td>(.*?)</td>", body, flags=re.S)


# Printable ASCII plus a few characters that matter to Markdown or HTML.
VALUES = st.text(alphabet=st.sampled_from([*map(chr, range(0x20, 0x7F)), "é", "→"]), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_a_code_span_in_a_cell_is_one_cell_and_shows_the_value(value: str) -> None:
    cells = _cells(f"| {md_code(value, cell=True)} | end |")
    assert len(cells) == 2 and cells[1] == "end"
    shown = value.strip(" ") if value.strip(" ") else value  # CommonMark trims code-span padding
    assert cells[0].startswith("<code>") and cells[0].endswith("</code>")
    assert _unescape(cells[0][6:-7]).strip(" ") == shown.strip(" ")


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_escaped_text_in_a_cell_is_one_cell_with_no_element_but_mention_code(value: str) -> None:
    cells = _cells(f"| {md_text(value)} | end |")
    assert len(cells) == 2 and cells[1] == "end"
    assert re.sub(r"</?code>", "", cells[0]) == _html_escape(value).strip(" ")
    assert not re.search(r"<(?!/?code>)", cells[0])  # the only element: a code span round an "@"


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
@example(value="@@")  # two mentions side by side: one code span, not two that merge
@example(value="a @`@ b")
def test_escaped_text_in_a_paragraph_or_list_item_is_just_that_text(value: str) -> None:
    assume(value == value.strip(" "))  # Markdown trims a paragraph's spaces: layout, not content
    for source, (start, end) in ((f"x {md_text(value)}", ("<p>x ", "</p>")),
                                 (f"- {md_text(value)}", ("<ul>\n<li>", "</li>\n</ul>"))):
        html = MD.render(source).strip()
        assert html.startswith(start) and html.endswith(end), html
        inner = html[len(start):-len(end)]
        assert re.sub(r"</?code>", "", inner) == _html_escape(value)


def test_a_fenced_block_cannot_be_closed_by_its_content() -> None:
    code = "````\n```\n</details>"
    html = MD.render(md_fenced(code, "html") + "\nafter")
    assert html.startswith('<pre><code class="language-html">````\n```\n&lt;/details&gt;\n</code></pre>')
    assert "<p>after</p>" in html


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _unescape(html: str) -> str:
    return html.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


def test_a_dollar_is_escaped_in_markdown_text() -> None:
    """GitHub renders $x$ as math: a workspace named "$x$" must show its dollars, not a formula."""
    assert md_text("Pricing $x$ and $$y$$") == "Pricing \\$x\\$ and \\$\\$y\\$\\$"


def test_and_list_joins_one_two_or_more_items_as_a_sentence_does() -> None:
    from reconciler.text import and_list

    assert [and_list(["a"]), and_list(["a", "b"]), and_list(["a", "b", "c"])] == ["a", "a and b", "a, b and c"]
