"""api/ knows nothing of the emulator, the planner or the manifests."""

from __future__ import annotations

import subprocess
import sys


def test_api_package_imports_nothing_from_emulator_plan_or_manifest() -> None:
    code = (
        "import sys, pkgutil, importlib, reconciler.api;"
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(reconciler.api.__path__, 'reconciler.api.')];"
        "bad = sorted(m for m in sys.modules if m.startswith(('reconciler.emulator', 'reconciler.plan',"
        " 'reconciler.manifest', 'reconciler.apply', 'reconciler.live')));"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
