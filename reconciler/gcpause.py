"""Pausing Python's cyclic garbage collector while big acyclic data is built.

Loading a large manifest, parsing thousands of listed workspaces and diffing
their access lists allocate hundreds of thousands of small objects that are
all alive until the command ends. Each allocation burst triggers cyclic
collections that walk every live object, which made a 5,000-workspace plan
superlinear (bench/README.md: about half of the CPU time). These structures
hold no reference cycles, so reference counting alone frees them; the
collector is resumed afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


# Set by a process that runs one command and exits (``freeze_after_pauses``), never by one that serves or
# runs many (the tests call the command line in-process): see ``gc_paused``.
_freeze = False


def freeze_after_pauses() -> None:
    """From now on, what a paused block built is frozen when the block ends (``gc.freeze``): never walked by
    a cyclic collection again, still freed by reference counting. For a process that runs one command: a
    plan's manifests, listing and changes are alive to its end, and each collection after a pause walked
    them all again (1.0 s of a 10.3 s plan at 10,000 changes, bench/README.md). A cycle made inside a
    block and dropped later is never collected: fine for a process about to exit, not for a server."""
    global _freeze
    _freeze = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (usable as a decorator)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
