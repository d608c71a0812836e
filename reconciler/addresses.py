"""The two kinds of address that are not a manifest's workspace: built and told apart here, once.

``asset.KEY`` is an asset of the manifests (its record holds an asset id,
never a workspace's); ``unmanaged.<workspace id>`` is what the rules put on a
workspace no manifest's list governs (``reconciler.plan.company``), which the
address a manifest gives that workspace later replaces.  The manifests, the
plan, its checks of the state and ``state mv`` all build and read them with
these functions, so no two of them can disagree on what an address is.
"""

from __future__ import annotations

ASSET = "asset"
UNMANAGED = "unmanaged"


def asset_address(key: str) -> str:
    """The address of the manifests' asset ``key``."""
    return f"{ASSET}.{key}"


def unmanaged_address(workspace_id: str) -> str:
    """The address of the rules' entries on a workspace no manifest's list governs."""
    return f"{UNMANAGED}.{workspace_id}"


def is_asset(address: str) -> bool:
    """Whether ``address`` is an asset's (any other is a workspace's)."""
    return address.startswith(f"{ASSET}.")


def is_unmanaged(address: str) -> bool:
    """Whether ``address`` is the rules' record of a workspace no manifest names."""
    return address.startswith(f"{UNMANAGED}.")
