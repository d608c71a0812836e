"""Client of the Workspace Collaboration Service API.

    connection.py   the service address and the ``httpx.Client`` with its headers
    client.py       ``WorkspaceClient``: one method per documented endpoint
    endpoints/      the endpoint methods, one module per resource group
    requester.py    one call: rate limit, send, retry, errors; ``ClientStats``
    limits.py       every cap on what the service can make the client do
    deadline.py     a deadline for a whole answer (``--timeout``), not only each read
    ratelimit.py    client-side rate limits per class, corrected by the service
    retry.py        which calls may be repeated, and how long to wait
    responses.py    reading bodies: the error envelope, ``{data: {...}}``
    errors.py       ``ApiError`` and its subclasses
    models.py       tolerant response models, access-list inputs
    bodies.py       strict request bodies (connect, assets)
    properties.py   the ``properties`` values each endpoint accepts

Nothing here knows the emulator: it is reached through an ``httpx`` transport.
May import vocabulary, clock, text, errors and the package's version; nothing of
manifest/, plan/, apply/ or emulator/ (the map in docs/design.md;
tests/test_import_graph.py).
"""
