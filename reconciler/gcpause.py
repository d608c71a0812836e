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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (usable as a decorator)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
