"""``reconciler who``: explicit arguments in, the rendered answer out."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.service import Service


def who(subject: str, path: Path, *, service: Service, state_path: Path | str | None = None, fmt: str = "text",
        directory: str = "committed", today: date | None = None) -> str:
    """Where ``subject`` (an email or a domain) has access now, and why; ``directory`` as ``plan
    --directory`` reads it (``committed`` or ``live``).

    The subject is checked before any call; the company is read once
    (``reconciler.company.read``) and nothing is written: no state, no lock.
    """
    from reconciler.commands.plan import chosen_directory, utc_today
    from reconciler.company.read import ATTRIBUTION_PROPERTIES, load_and_read
    from reconciler.company.who import parse_subject, render_who
    from reconciler.company.who import who as answer

    kind, key = parse_subject(subject)
    # who never shows lint's warnings (the plan and validate do): not looked for.
    read = load_and_read(path, service=service, today=today or utc_today(), state_path=state_path, lint_notes=False,
                         properties=ATTRIBUTION_PROPERTIES,  # it plans nothing: no creation fields
                         people=chosen_directory(directory, state_path, path))
    return render_who(answer(read.company, kind, key), fmt=fmt)
