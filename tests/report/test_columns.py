"""The column writers' two helpers, on their own: rows put together from pieces, and runs."""

from __future__ import annotations

import pytest

from reconciler.report.columns import each_run, formatted, run_lengths


def test_formatted_rows_hold_each_piece_text_as_written_and_a_value_of_each_column() -> None:
    rows = formatted([("100% of ", ["a", "b"]), (" and %s, ", None), ("then ", ["%d", "%%"]), (".", None)])
    assert rows == ["100% of a and %s, then %d.", "100% of b and %s, then %%."]


def test_each_run_repeats_each_runs_text_for_the_rows_of_the_run() -> None:
    assert each_run(["A", "B", "A"], [2, 1, 1]) == ["A", "A", "B", "A"]
    assert each_run([], []) == []


def test_run_lengths_count_each_run_of_equal_values_in_order() -> None:
    assert run_lengths(["a", "a", "b", "a", "a", "a"]) == [2, 1, 3]
    assert run_lengths([]) == []


def test_formatted_refuses_columns_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        formatted([("", ["a", "b"]), (",", ["c"])])


def test_formatted_rows_without_any_column_are_none() -> None:
    assert formatted([("text alone", None)]) == []


def test_text_facts_tell_printable_ascii_and_which_noted_characters_a_column_holds() -> None:
    from reconciler.report.columns import TextFacts, text_facts

    assert text_facts(["a@b.com", None, "", "x, y"]) == TextFacts(True, ",")
    assert text_facts(['say "hi"', "a<b>&c\\"]) == TextFacts(True, '"\\<>&')
    assert text_facts(["née"]) == TextFacts(False, '"\\<>&,')
    assert text_facts(["tab\there"]).printable_ascii is False
    assert text_facts(["a", 3]) == TextFacts(False, '"\\<>&,')  # type: ignore[list-item]


def test_plain_from_facts_answers_for_any_noted_characters_and_refuses_others() -> None:
    from reconciler.report.columns import plain, text_facts

    facts = text_facts(["x, y", "z"])
    assert plain(["z"], '"\\', facts) is True
    assert plain(["z"], ',"', facts) is False  # the column holds a comma, though "z" does not
    assert plain(["x, y"], ',"') is False and plain(["z"], ',"') is True
    with pytest.raises(ValueError, match="not of ';'"):
        plain(["z"], ";", facts)
    assert plain(["a;b"], ";") is False  # without facts, any character can be asked of


def test_text_facts_call_printable_ascii_exactly_what_str_isprintable_calls_printable() -> None:
    from reconciler.report.columns import text_facts

    for code in range(0x80):
        assert text_facts([f"a{chr(code)}b"]).printable_ascii is chr(code).isprintable(), hex(code)


def test_text_facts_of_a_column_looked_at_a_few_values_at_a_time_are_the_facts_of_all_of_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.report import columns
    from reconciler.report.columns import TextFacts, text_facts

    monkeypatch.setattr(columns, "FACTS_AT_ONCE", 2)
    assert text_facts(["a", "b", "c,d", None, 'e"']) == TextFacts(True, '",')
    assert text_facts(["a", "b", "c", "née"]) == TextFacts(False, '"\\<>&,')
    assert text_facts(["a", "b", "c", 3]) == TextFacts(False, '"\\<>&,')  # type: ignore[list-item]
