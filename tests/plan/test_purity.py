"""plan/ is pure: importing it must not pull in the HTTP client."""

import subprocess
import sys


def test_plan_package_imports_nothing_from_api() -> None:
    code = (
        "import sys, reconciler.plan;"
        "bad = sorted(m for m in sys.modules if m.startswith(('reconciler.api', 'httpx')));"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
