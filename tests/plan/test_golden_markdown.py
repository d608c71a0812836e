"""The markdown plan of the onboarding example, as a pull request shows it:
compared with a reviewed golden file, and rendered to HTML by a Markdown
library (markdown-it-py, CommonMark with tables) to prove GitHub-style
renderers find the summary table and the per-person section.

Regenerate after a reviewed change of the renderer:
    RECONCILER_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest tests/plan/test_golden_markdown.py
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.e2e.conftest import ROOT, run_cli

GOLDEN = Path(__file__).parent / "golden" / "onboarding-plan.md"


@pytest.fixture
def onboarding_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    monkeypatch.chdir(root)  # locations read "groups.yaml:10", the same on every machine
    code, out, err = run_cli(["plan", ".", "--emulator", "emulator.yaml", "--seed", "seed.yaml",
                              "--format", "markdown"], capsys)
    assert code == 0, err
    # The digest covers the asset files' absolute paths (apply uploads exactly those), which
    # differ from one temporary directory to the next: the golden file holds a placeholder.
    return re.sub(r"Plan digest: `[0-9a-f]{64}`", "Plan digest: `DIGEST`", out)


def test_the_onboarding_plan_matches_the_reviewed_golden_file(onboarding_markdown: str) -> None:
    if os.environ.get("RECONCILER_REGENERATE_GOLDEN"):
        GOLDEN.write_text(onboarding_markdown, encoding="utf-8")
    assert onboarding_markdown == GOLDEN.read_text(encoding="utf-8")


def test_the_markdown_renders_a_summary_table_and_a_per_person_section(onboarding_markdown: str) -> None:
    html = MarkdownIt("commonmark").enable("table").render(onboarding_markdown)
    summary = html[html.index("<table>"):html.index("</table>")]
    assert ">add</th>" in summary and ">credits</th>" in summary and ">assets</th>" in summary
    assert '<td style="text-align:right">22</td>' in summary  # the API calls
    assert "<details>" in html and "<summary>By person:" in html
    start = html.index("<summary>By person:")
    people = html[start:html.index("</details>", start)]
    assert "<td>user <code>priya@customer.com</code></td>" in people
    assert html.count("<table>") >= 3  # the summary, the access lists, the people
