"""The endpoint methods of ``WorkspaceClient``, one module per resource group.

Each module holds a mixin of ``EndpointBase``; ``client.WorkspaceClient``
combines them, so callers see one client with one method per endpoint.
"""
