"""``reconciler export``: write manifests from the live service (to adopt an existing setup)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.service import Service


def export(*, service: Service, out_dir: Path) -> str:
    """Write one manifest per account into ``out_dir``; the report of what was written."""
    from reconciler import export as exporting
    from reconciler.service import open_client

    # Checked before connecting, so a refusal costs no request (and creates no emulator file).
    exporting.check_out_dir(out_dir)
    with open_client(service) as client:
        result = exporting.export_manifests(client, out_dir)
    return exporting.render_report(result)
