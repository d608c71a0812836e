"""An in-process, stateful emulator of the Workspace Collaboration Service.

A second, independent reading of the service's API description: it may
import vocabulary, clock, gcpause, text and errors, and nothing of api/, plan/, apply/,
commands/ (the map in docs/design.md; tests/test_import_graph.py).  Use it
through ``emulator_transport`` in-process, or over HTTP with
``reconciler.emulator.server``.  Choices made where the description says
"not shown" are listed in this package's README.md.
"""

from reconciler.emulator.context import EmulatorResponse
from reconciler.emulator.core import Emulator
from reconciler.emulator.faults import ConnectionDropped
from reconciler.emulator.seed import SeedError
from reconciler.emulator.transport import emulator_transport

__all__ = ["ConnectionDropped", "Emulator", "EmulatorResponse", "SeedError", "emulator_transport"]
