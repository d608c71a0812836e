"""Counts read as English: one helper (reconciler.text.plural) for every noun
a count is shown with, and no "(s)"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.commands.apply import applied_line
from reconciler.plan import render_markdown, render_text
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    Action,
    ApiCall,
    Cost,
    CreateChange,
    EntryChange,
    Plan,
    PlanSummary,
)
from reconciler.text import plural

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n, shown", [(0, "0 API calls"), (1, "1 API call"), (2, "2 API calls")])
def test_plural_is_singular_only_for_one(n: int, shown: str) -> None:
    assert plural(n, "API call") == shown


def test_plural_takes_an_irregular_plural() -> None:
    assert (plural(1, "person", "people"), plural(3, "person", "people")) == ("1 person", "3 people")


def _one_of_each() -> Plan:
    creation = CreateChange(address="group.a.workspace.b", group="group.a", homepage_id="ws_1",
                            template_id="tpl_1", name="B",
                            calls=(ApiCall(method="POST", path="/workspaces", limit_class="workspace_creation"),))
    entry = EntryChange(kind="user", key="a@b.com", action=Action.CREATE, after="viewer")
    access = AccessChange(address="group.a", workspace_id="ws_1", strategy="replace", entries=(entry,),
                          before=AccessSnapshot(), after=AccessSnapshot())
    return Plan(changes=(creation, access), summary=PlanSummary(create=1, workspaces_created=1, settings=1),
                cost=Cost(calls_by_class={"workspace_creation": 1}, workspace_credits=1, conversion_polls=1))


def test_one_call_and_one_credit_are_singular_in_text_and_markdown() -> None:
    for view in (render_text(_one_of_each()), render_markdown(_one_of_each())):
        assert "Cost: 1 API call: 1 in the workspace_creation rate class (30/min)" in view
        assert "; 1 workspace credit." in view and "1 section/page/task value to set" in view
        assert "at least 1 more call in the file" in view


def test_the_apply_summary_says_one_workspace_one_credit_one_list() -> None:
    assert applied_line(_one_of_each()) == ("1 added, 0 changed, 0 removed on 1 access list; "
                                            "1 workspace created (1 credit); 1 section/page/task value set")


def test_no_message_in_the_code_says_s_in_brackets() -> None:
    # "(s)" after a word is how a count was once shown; http(s) is a scheme.
    found = [f"{path.relative_to(REPO)}:{n}" for path in (REPO / "reconciler").rglob("*.py")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"[a-z]\(s\)", line.replace("http(s)", "")) and "text.py" not in path.name]
    assert found == []
