"""The report's pictures, drawn as inline SVG by pure functions.

Each function takes plain numbers and labels and returns one ``<svg>``
element as text: no I/O, no randomness, the same input gives the same bytes.
Every label is escaped (emails and names come from the service), and a long
label is shortened on the axis with the whole of it in the bar's tooltip.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

# Colours readable by people with the common colour-vision deficiencies
# (the Okabe–Ito palette's blue and vermilion) and in greyscale.
INTERNAL_COLOUR = "#0072B2"
EXTERNAL_COLOUR = "#D55E00"
BAR_COLOUR = "#0072B2"
TEXT_COLOUR = "#222222"
GRID_COLOUR = "#dddddd"
FONT = "font-family=\"system-ui, sans-serif\" font-size=\"12\""
LABEL_CHARS = 32


def _text(value: str) -> str:
    return escape(value, quote=True)


def _short(label: str, limit: int = LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _open(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{_text(title)}" {FONT}>'
            f"<title>{_text(title)}</title>")


def _scale(maximum: int, length: int) -> float:
    """Pixels per unit, so the largest value fills ``length`` (a chart of zeros draws no bars)."""
    return length / maximum if maximum > 0 else 0.0


def grouped_bars(title: str, categories: Sequence[str], series: Sequence[tuple[str, str]],
                 values: Sequence[Sequence[int]], *, width: int = 560) -> str:
    """Horizontal bars: for each category, one bar per series (``(name, colour)``).

    ``values[i][j]`` is category ``i``'s value in series ``j``.  A legend
    names the series; each bar's tooltip says category, series and value.
    """
    label_w, bar_h, gap, top = 110, 14, 10, 28
    plot_w = width - label_w - 60
    group_h = bar_h * len(series) + gap
    height = top + max(1, len(categories)) * group_h + 10
    scale = _scale(max((v for row in values for v in row), default=0), plot_w)
    parts = [_open(width, height, title)]
    x = label_w
    for name, colour in series:  # legend
        parts.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{x + 16}" y="16" fill="{TEXT_COLOUR}">{_text(name)}</text>')
        x += 24 + 7 * len(name)
    if not categories:
        parts.append(f'<text x="{label_w}" y="{top + 14}" fill="{TEXT_COLOUR}">No access rows</text>')
    for i, category in enumerate(categories):
        y0 = top + i * group_h
        parts.append(f'<text x="{label_w - 6}" y="{y0 + group_h / 2:.1f}" text-anchor="end" '
                     f'dominant-baseline="middle" fill="{TEXT_COLOUR}">{_text(_short(category))}</text>')
        for j, (name, colour) in enumerate(series):
            value = values[i][j]
            y = y0 + j * bar_h
            w = value * scale
            parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="{colour}">'
                         f"<title>{_text(f'{category}, {name}: {value}')}</title></rect>"
                         f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 4}" fill="{TEXT_COLOUR}">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram(title: str, bins: Sequence[tuple[str, int]], *, x_label: str, y_label: str,
              width: int = 560, height: int = 240) -> str:
    """Vertical columns, one per ``(label, count)`` bin, in the order given."""
    left, bottom, top = 50, 40, 16
    plot_w, plot_h = width - left - 10, height - top - bottom
    slot = plot_w / max(1, len(bins))
    scale = _scale(max((n for _, n in bins), default=0), plot_h)
    parts = [_open(width, height, title),
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" stroke="{GRID_COLOUR}"/>']
    for i, (label, count) in enumerate(bins):
        h = count * scale
        x = left + i * slot + slot * 0.1
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{slot * 0.8:.1f}" height="{h:.1f}" '
                     f'fill="{BAR_COLOUR}"><title>{_text(f"{label}: {count}")}</title></rect>'
                     f'<text x="{x + slot * 0.4:.1f}" y="{top + plot_h - h - 4:.1f}" text-anchor="middle" '
                     f'fill="{TEXT_COLOUR}">{count}</text>'
                     f'<text x="{x + slot * 0.4:.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
                     f'fill="{TEXT_COLOUR}">{_text(label)}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" '
                 f'fill="{TEXT_COLOUR}">{_text(x_label)}</text>'
                 f'<text x="12" y="{top + plot_h / 2:.1f}" text-anchor="middle" fill="{TEXT_COLOUR}" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">{_text(y_label)}</text></svg>')
    return "".join(parts)


def bars(title: str, items: Sequence[tuple[str, int]], *, width: int = 560) -> str:
    """Horizontal bars, one per ``(label, value)``, in the order given."""
    label_w, bar_h, top = 230, 18, 8
    plot_w = width - label_w - 50
    height = top + max(1, len(items)) * bar_h + 8
    scale = _scale(max((v for _, v in items), default=0), plot_w)
    parts = [_open(width, height, title)]
    if not items:
        parts.append(f'<text x="{label_w}" y="{top + 12}" fill="{TEXT_COLOUR}">Nobody</text>')
    for i, (label, value) in enumerate(items):
        y = top + i * bar_h
        w = value * scale
        parts.append(f'<text x="{label_w - 6}" y="{y + bar_h / 2:.1f}" text-anchor="end" dominant-baseline="middle" '
                     f'fill="{TEXT_COLOUR}">{_text(_short(label))}</text>'
                     f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{bar_h - 4}" fill="{BAR_COLOUR}">'
                     f"<title>{_text(f'{label}: {value}')}</title></rect>"
                     f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h / 2:.1f}" dominant-baseline="middle" '
                     f'fill="{TEXT_COLOUR}">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)
