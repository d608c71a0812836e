"""Addresses that are probably the same person (reconciler/plan/lookalikes.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.plan.lookalikes import (
    LookalikeIndex,
    _parts,
    has_invisible,
    invisible_warnings,
    local_keys,
    lookalikes,
    skeleton,
    spelled,
)


@pytest.mark.parametrize(("other", "why"), [
    ("ana+old@acme.com", "a +tag"),
    ("a.na@acme.com", "dots"),
    ("\u0430na@acme.com", "look-alike characters"),  # a Cyrillic а
    ("ana@sub.acme.com", "a subdomain"),
    ("ana\u200b@acme.com", "invisible or space characters"),
    (" ana@acme.com", "invisible or space characters"),
])
def test_each_look_alike_of_a_leaver_is_found_with_its_reason(other: str, why: str) -> None:
    assert [tuple(found) for found in lookalikes("ana@acme.com", [other])] == [(other, why)]


@pytest.mark.parametrize("other", ["anna@acme.com", "ana@acme.co", "ana@notacme.com", "bob@acme.com",
                                   "ana@acme.com"])
def test_another_person_or_the_address_itself_is_not_a_look_alike(other: str) -> None:
    assert lookalikes("ana@acme.com", [other]) == []


def test_gmail_ignores_dots_and_googlemail_is_gmail() -> None:
    found = lookalikes("ana@gmail.com", ["a.na@googlemail.com"])
    assert [tuple(f) for f in found] == [
        ("a.na@googlemail.com", "dots, which gmail.com ignores, googlemail.com, another name of gmail.com")]


def test_the_skeleton_maps_a_cyrillic_letter_to_its_latin_look_alike() -> None:
    assert skeleton("\u0430na") == skeleton("ana")
    assert skeleton("bob") != skeleton("ana")


def test_a_look_alike_is_spelled_so_it_does_not_print_as_the_original() -> None:
    assert spelled("\u0430na@acme.com") == "\\u0430na@acme.com"
    assert spelled("ana\u200b@acme.com") == "ana\\u200b@acme.com"
    assert spelled(" ana@acme.com") == "\\u0020ana@acme.com"


def test_an_address_the_service_reports_with_a_space_is_flagged() -> None:
    assert invisible_warnings([("ws_b", "Beta", [" ana@acme.com", "bob@acme.com"])]) == [
        'ws_b "Beta": the service reports user \\u0020ana@acme.com, whose address holds invisible or space '
        "characters, which no mail system issues: probably a look-alike of ana@acme.com, kept when ana@acme.com "
        "is revoked. Remove it in the web app."]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.sampled_from("ab@.\u00e9 \t\u200b\x00,"), max_size=5), max_size=4),
                max_size=4))
def test_each_workspace_warns_of_exactly_the_addresses_holding_an_invisible_or_space_character(
        lists: list[list[str]]) -> None:
    workspaces = [(f"ws_{i}", None, emails) for i, emails in enumerate(lists)]
    warned = [(w, key) for w, _, emails in workspaces for key in sorted(emails) if has_invisible(key)]
    assert len(invisible_warnings(workspaces)) == len(warned)
    for warning, (workspace_id, key) in zip(invisible_warnings(workspaces), warned, strict=True):
        assert warning.startswith(f"{workspace_id}: the service reports user {spelled(key)},")


_ADDRESS_PARTS = st.text(alphabet=st.sampled_from("aAnN01lIoO.+-_ \t\u0430\u200b\u00e9"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(lambda local, host: f"{local}@{host}", _ADDRESS_PARTS,
                          st.sampled_from(["acme.com", "sub.acme.com", "gmail.com", "googlemail.com", "x.io"])),
                max_size=12))
def test_the_batched_local_parts_are_each_address_taken_apart_alone(emails: list[str]) -> None:
    assert local_keys(emails) == [_parts(email).local for email in emails]


@pytest.mark.parametrize("revoked", ["ana@acme.com", "ana@gmail.com", "\u0430na@acme.com", "AN.A+x@acme.com"])
def test_an_index_kept_to_the_revoked_finds_what_the_whole_index_finds(revoked: str) -> None:
    candidates = ["ana+old@acme.com", "a.na@googlemail.com", "\u0430na@acme.com", "ana@sub.acme.com",
                  "ana\u200b@acme.com", " ana@acme.com", "anna@acme.com", "bob@acme.com", "ANA@acme.com",
                  "ana@gmail.com", "ana@acme.com"]
    whole = LookalikeIndex(candidates).of(revoked)
    assert whole, "the example must find look-alikes to compare"
    assert LookalikeIndex(candidates, only_like=[revoked]).of(revoked) == whole


def test_an_index_kept_to_the_revoked_holds_only_their_look_alikes() -> None:
    index = LookalikeIndex(["ana+old@acme.com", "bob@acme.com", "b.o.b@gmail.com"], only_like=["ana@acme.com"])
    assert [found.key for found in LookalikeIndex(["b.o.b@gmail.com"]).of("bob@gmail.com")] == ["b.o.b@gmail.com"]
    assert index.of("bob@gmail.com") == []
    assert [found.key for found in index.of("ana@acme.com")] == ["ana+old@acme.com"]
