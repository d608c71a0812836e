"""The commands, one module per command: explicit keyword arguments in, a result or text out.

``cli`` parses the command line, calls one function of a module here, prints
what it returns and exits; these functions do the work and raise
``ReconcilerError`` subclasses with messages a user can act on.  Keeping
click out of here lets tests call a command the way the CLI does.

Each module imports at its top only what ``reconciler validate`` and
``--help`` may load (the manifests, text helpers); the client, the state, the
emulator and apply are imported by the functions that use them, so the
command line starts fast (tests/test_startup_imports.py).

May import: manifest/, plan/, state, service, api/, apply/, live, export,
emulator/ (demo and ``emulator serve``), owned_files, clock, text, errors;
never click (the map in docs/design.md; tests/test_import_graph.py).
"""
