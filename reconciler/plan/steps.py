"""What every step of the planner reads (``Inputs``) and returns (``Planned``).

``make_plan`` is a sequence of steps (groups, standalone workspaces, assets,
then the plan's facts and warnings); each takes the same inputs and hands
back its changes in apply's order, so the steps add up in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from typing import TYPE_CHECKING

from reconciler.live import Live
from reconciler.plan.model import Change
from reconciler.state.model import State

if TYPE_CHECKING:
    from reconciler.plan.company import CompanyPlanner

# Whether an address is in the plan: every address without --target, else those under a target.
Scope = Callable[[str], bool]


@dataclass
class Planned:
    """What a step of the planner found: changes in apply's order, the
    managed addresses already in line, and what the plan should say."""

    changes: list[Change] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __iadd__(self, other: Planned) -> Planned:
        self.changes += other.changes
        self.unchanged += other.unchanged
        self.warnings += other.warnings
        return self


@dataclass(frozen=True)
class Inputs:
    """What every step reads: the service, the state, and how the plan was asked for."""

    live: Live
    state: State
    scope: Scope
    reassert: bool = False
    today: date | None = None
    # Teams and rules: every manifest list is planned through it (plan/company.py).
    company: CompanyPlanner | None = None
    # Members whose creation waits for a person (plan/intents.py): not planned.
    blocked: frozenset[str] = frozenset()
