"""The pictures: well-formed SVG, one bar per value, sized by value, every label escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from reconciler.report.svg import bars, grouped_bars, histogram

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = '</svg><script>alert("x")</script>&amp'


def _rects(svg: str) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(f"{NS}rect"))


def test_bars_draw_one_bar_per_item_the_largest_full_width() -> None:
    svg = bars("Reach", [("a@x.com", 10), ("b@x.com", 5)], width=560)
    widths = [float(r.get("width", "")) for r in _rects(svg)]
    assert widths == [280.0, 140.0]


def test_bars_of_nothing_draw_no_bar_and_say_so() -> None:
    svg = bars("Reach", [])
    assert _rects(svg) == [] and "Nobody" in svg


def test_grouped_bars_draw_a_bar_per_category_and_series_plus_the_legend() -> None:
    svg = grouped_bars("Roles", ["owner", "viewer"], [("internal", "#00f"), ("external", "#f00")], [[4, 0], [1, 2]])
    rects = _rects(svg)
    assert len(rects) == 2 + 4  # two legend squares, then the bars
    assert [r.findtext(f"{NS}title") for r in rects[2:]] == [
        "owner, internal: 4", "owner, external: 0", "viewer, internal: 1", "viewer, external: 2"]


def test_a_chart_of_zeros_draws_zero_width_bars() -> None:
    svg = grouped_bars("Roles", ["owner"], [("internal", "#00f")], [[0]])
    assert [r.get("width") for r in _rects(svg)[1:]] == ["0.0"]


def test_histogram_columns_are_as_tall_as_their_count() -> None:
    svg = histogram("H", [("0", 4), ("1", 2), ("2+", 0)], x_label="x", y_label="y", height=240)
    heights = [float(r.get("height", "")) for r in _rects(svg)]
    assert heights == [184.0, 92.0, 0.0]


def test_every_label_and_title_is_escaped() -> None:
    for svg in (bars(HOSTILE, [(HOSTILE, 1)]), histogram(HOSTILE, [(HOSTILE, 1)], x_label=HOSTILE, y_label=HOSTILE),
                grouped_bars(HOSTILE, [HOSTILE], [(HOSTILE, "#000")], [[1]])):
        root = ET.fromstring(svg)  # well-formed: nothing closed the <svg> early
        assert "<script" not in svg and "</svg>" not in svg[:-6]
        assert root.findtext(f"{NS}title") == HOSTILE


def test_a_long_label_is_shortened_on_the_axis_and_whole_in_the_tooltip() -> None:
    label = "a.very.long.email.address.indeed@example.com"
    root = ET.fromstring(bars("Reach", [(label, 3)]))
    assert [t.text for t in root.iter(f"{NS}text")][0] == label[:31] + "…"
    assert root.find(f"{NS}rect/{NS}title").text == f"{label}: 3"  # type: ignore[union-attr]


def test_the_same_input_draws_the_same_bytes() -> None:
    assert bars("R", [("a", 1)]) == bars("R", [("a", 1)])
