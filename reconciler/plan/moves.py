"""The manifests' ``moved:`` entries carried out on the state the plan reads.

A moved address keeps what the state knows (its workspace id, the entries
this tool manages, the values it wrote), so the plan treats the new address
as the old one: nothing is created again and nothing removed.  Only the state
changes, when the plan is applied; no call is made for it.  An entry whose
``from`` the state does not record but whose ``to`` it does is done already,
and is nothing to do, as a Terraform ``moved`` block is.  An entry whose two
ends the state records neither is a mistake (a ``from`` misspelled: issue 41
item 6), refused at its line, unless the state records nothing at all yet
(nothing was applied with it: there is nothing a move could be about).
"""

from __future__ import annotations

import difflib

from reconciler.errors import ConfigError
from reconciler.manifest import Desired
from reconciler.plan.model import Moved
from reconciler.state.model import State


def apply_moves(desired: Desired, state: State) -> tuple[State, tuple[Moved, ...]]:
    """``state`` with every pending move made, and the moves made.

    ``ConfigError`` when the state records both ends of a move: which of
    the two is right is for a person to say; and when it records neither."""
    made: list[Moved] = []
    for move in desired.moves:
        pairs = state.moves(move.source, move.destination)  # a group's members move with it
        if not pairs and state.resources and not _records(state, move.destination):
            matches = difflib.get_close_matches(move.source, list(state.resources), n=3, cutoff=0.5)
            near = f" Did you mean {', '.join(matches)}?" if matches else ""
            raise ConfigError(
                f"{move.location}: moved: {move.source} to {move.destination}: the state records neither address, "
                f"so this entry moves nothing: {move.source} is not an address the state has (misspelled?).{near} "
                "Correct 'from' ('reconciler state list' shows what the state records), or remove the entry. "
                "Nothing was called.")
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


def _records(state: State, address: str) -> bool:
    """Whether the state records ``address`` or an address under it (a group's members)."""
    return any(a == address or a.startswith(address + ".") for a in state.resources)


def moved_state(desired: Desired, state: State) -> State:
    """``state`` as the plan reads it: every pending move made."""
    return apply_moves(desired, state)[0] if desired.moves else state
