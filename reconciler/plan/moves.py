"""The manifests' ``moved:`` entries carried out on the state the plan reads.

A moved address keeps what the state knows (its workspace id, the entries
this tool manages, the values it wrote), so the plan treats the new address
as the old one: nothing is created again and nothing removed.  Only the state
changes, when the plan is applied; no call is made for it.  An entry whose
``from`` the state does not record is done already (or was never applied),
and is nothing to do, as a Terraform ``moved`` block is.
"""

from __future__ import annotations

from reconciler.errors import ConfigError
from reconciler.manifest import Desired
from reconciler.plan.model import Moved
from reconciler.state.model import State


def apply_moves(desired: Desired, state: State) -> tuple[State, tuple[Moved, ...]]:
    """``state`` with every pending move made, and the moves made.

    ``ConfigError`` when the state records both ends of a move: which of
    the two is right is for a person to say."""
    made: list[Moved] = []
    for move in desired.moves:
        pairs = state.moves(move.source, move.destination)  # a group's members move with it
        for source, destination in pairs:
            recorded, there = state.resources[source], state.resources.get(destination)
            if there is not None:
                raise ConfigError(
                    f"{move.location}: moved: {move.source} to {move.destination}: the state records both "
                    f"({source} as {recorded.id or 'no id'}, {destination} as {there.id or 'no id'}), so the "
                    f"move cannot be made. Forget the stale one ('reconciler state rm {source}' or 'reconciler "
                    f"state rm {destination}'), then plan again. Nothing was called.")
            made.append(Moved(address=destination, previous_address=source, id=recorded.id or None,
                              location=str(move.location)))
        if pairs:
            state = state.moved(move.source, move.destination)
    return state, tuple(made)


def moved_state(desired: Desired, state: State) -> State:
    """``state`` as the plan reads it: every pending move made."""
    return apply_moves(desired, state)[0] if desired.moves else state
