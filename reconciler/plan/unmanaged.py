"""Warnings for what the manifests declare but this version does not plan yet.

Assets are validated (so a manifest written today stays valid), but
planning them is later work. A silent skip would let a reviewer believe they
are in force; each one is named, with its location, in every plan instead.
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.manifest import Desired


def unmanaged_warnings(desired: Desired, targeted: Callable[[str], bool]) -> tuple[str, ...]:
    """One warning per declared asset, in manifest order."""
    return tuple(
        f"{asset.location}: {asset.address}: assets are not planned yet; nothing is uploaded."
        for asset in desired.assets
        if targeted(asset.address)
    )
