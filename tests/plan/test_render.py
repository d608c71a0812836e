"""Renderers draw the Plan and nothing else; removals cannot be missed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from markdown_it import MarkdownIt

from reconciler.manifest import load_desired
from reconciler.plan import Plan, make_plan, render_markdown, render_text
from reconciler.state import ResourceState, State
from tests.conftest import live_of, live_workspace
from tests.plan.test_planner import GROUP, HOME_LIVE


def _plan(write_manifest: Callable[..., Path]) -> Plan:
    return make_plan(load_desired(write_manifest(GROUP)), live_of(HOME_LIVE), State())


def test_text_shows_each_entry_with_its_symbol(write_manifest: Callable[..., Path]) -> None:
    text = render_text(_plan(write_manifest))
    assert "      + user   priya@customer.com  viewer" in text
    assert "      ~ user   raj@customer.com    viewer -> collaborator" in text
    assert "      - user   old@agency.io       editor   REMOVED: loses access" in text


def test_text_repeats_removals_after_the_summary(write_manifest: Callable[..., Path]) -> None:
    text = render_text(_plan(write_manifest))
    summary_at = text.index("Plan: 1 to add, 1 to change, 1 to remove.")
    assert text.index("! 1 access entry will be REMOVED (a person or domain losing all access to a workspace):"
                      ) > summary_at
    assert '!   ws_home "Home": user old@agency.io (was editor; group.onboarding)' in text


def test_text_states_the_cost(write_manifest: Callable[..., Path]) -> None:
    text = render_text(_plan(write_manifest))
    assert ("Cost: 3 API calls: 3 in the default rate class (120/min), 2 of them re-reading the lists before and "
            "after writing; no workspace credits.\n") in text


def test_text_without_colour_has_no_escape_codes(write_manifest: Callable[..., Path]) -> None:
    assert "\x1b[" not in render_text(_plan(write_manifest), color=False)
    assert "\x1b[1;31m" in render_text(_plan(write_manifest), color=True)


def test_empty_plan_says_no_changes(write_manifest: Callable[..., Path]) -> None:
    live = live_workspace(
        "ws_home",
        users={"jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "viewer"},
        domains={"customer.com": "viewer"},
    )
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(live), State())
    assert render_text(plan).startswith("No changes. The service matches the manifests (1 access list checked).\n")


def test_markdown_has_a_summary_table_and_leads_with_revocations_and_escalations(
    write_manifest: Callable[..., Path],
) -> None:
    path = write_manifest(GROUP)
    md = render_markdown(make_plan(load_desired(path), live_of(HOME_LIVE), State()))
    assert "| 1 | 1 | 1 | 0 | 0 | 0 | 0 | 3 | 0 | 0 s |" in md
    review = md.index("**Review first**")
    revocation = md.index("> - **revocation** `group.onboarding`: user `old@agency.io` loses editor")
    escalation = md.index(f"> - **escalation** `group.onboarding`: user `raj@customer.com` viewer → collaborator "
                          f"({path}:8)")
    assert review < revocation < escalation < md.index("#### `group.onboarding`")
    assert "| `-` | user | `old@agency.io` | ~~editor~~ | **REMOVE**: revocation |  |" in md
    assert f"| `~` | user | `raj@customer.com` | viewer → collaborator | change role: escalation | {path}:8 |" in md


def test_markdown_folds_a_per_person_view(write_manifest: Callable[..., Path]) -> None:
    md = render_markdown(_plan(write_manifest))
    assert ("<details>\n<summary>By person: 3 people or domains; on workspaces: 1 grant, 1 escalation, "
            "0 downgrades, 1 revocation</summary>") in md
    assert '| user `old@agency.io` | ws_home "Home" | loses editor | revocation | `group.onboarding` |' in md


def test_json_round_trips_to_the_same_plan(write_manifest: Callable[..., Path]) -> None:
    plan = _plan(write_manifest)
    doc = json.loads(plan.model_dump_json())
    assert doc["format_version"] == 3
    assert Plan.model_validate(doc) == plan


def _forgotten(write_manifest: Callable[..., Path]) -> Plan:
    from tests.plan.test_planner import GROUP

    live = live_workspace("ws_home", users={"jane@acme.com": "owner", "raj@customer.com": "collaborator",
                                            "priya@customer.com": "viewer"}, domains={"customer.com": "viewer"})
    state = State(resources={"workspace.gone": ResourceState(id="ws_gone")})
    return make_plan(load_desired(write_manifest(GROUP)), live_of(live), state)


def test_text_shows_warnings_even_when_nothing_changes(write_manifest: Callable[..., Path]) -> None:
    text = render_text(_forgotten(write_manifest))
    assert text.startswith("No changes.")
    assert "Warning: workspace.gone: no manifest names it any more" in text


def test_markdown_lists_warnings_in_a_note(write_manifest: Callable[..., Path]) -> None:
    text = render_markdown(_forgotten(write_manifest))
    assert "> [!NOTE]\n> Warnings:\n> - workspace.gone: no manifest names it any more" in text


def test_control_characters_from_a_manifest_are_escaped_in_every_view(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        assets:
          site:
            type: link
            url: "https://acme.com"
            name: "Acme\\e[2J\\rApproved by security\\u202e"
            description: "line\\x0bbreak"
    """)
    plan = make_plan(load_desired(path), live_of(), State())
    markdown = render_markdown(plan)
    for view in (render_text(plan), markdown):
        assert "\x1b" not in view and "\r" not in view and "\x0b" not in view and "\u202e" not in view
    assert "Acme\\x1b[2J\\x0dApproved by security\\u202e" in render_text(plan)
    # The markdown source escapes the backslashes and the bracket; a reader sees the same escapes.
    assert "Acme\\x1b[2J\\x0dApproved by security\\u202e" in MarkdownIt("commonmark").render(markdown)
    assert "\x1b[2J" not in render_text(plan, color=True)


def test_show_unmanaged_escapes_a_hostile_workspace_name_for_the_terminal() -> None:
    """A workspace named with escape sequences (colour, a window title, a bell) prints them escaped."""
    hostile = 'ws_x "\x1b]0;owned\x07\x1b[2J\x1b[31mEvil\u202e"'
    text = render_text(Plan(unmanaged_count=1, unmanaged=(hostile,)))

    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert '  ws_x "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mEvil\\u202e"\n' in text
