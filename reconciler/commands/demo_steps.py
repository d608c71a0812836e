"""The steps every demo shows: a plan of PATH and an apply of it, on the demo's emulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.commands.apply import apply
from reconciler.commands.plan import plan

if TYPE_CHECKING:
    from reconciler.service import Service


def plan_and_apply(path: Path, *, service: Service, state_path: Path, color: bool
                   ) -> tuple[tuple[str, Callable[[], str]], tuple[str, Callable[[], str]]]:
    """The demo's plan and apply steps of ``path``: (title, run) each, the apply approving itself."""
    from reconciler.plan import render_text

    where = f"--emulator {service.emulator_file}"

    def show_plan() -> str:
        return render_text(plan(path, service=service, state_path=state_path), color=color)

    def run_apply() -> str:
        return apply(path, service=service, state_path=state_path, targets=(), max_removals=None,
                     plan_file=None, confirm=lambda text: print(text, end="") or True, color=color,
                     progress=lambda m: print(f"  {m}"))

    return (f"reconciler plan {path} {where}", show_plan), (f"reconciler apply {path} {where} --auto-approve",
                                                            run_apply)
