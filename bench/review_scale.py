"""Benchmark: ``reconciler review start`` at N workspaces: ``python -m bench.review_scale 10000``.

The company of ``bench/scenario.py`` (25 access entries a workspace) on the
in-process emulator; the command's whole path as ``review start`` runs it:
``load_desired``, the one listing of the company (``reconciler.company.read``:
ceil(N/100) calls, checked), every entry attributed, the campaign made
(``reconciler.review.start``) and its files written.  Prints the markdown
rows for bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import math
import tempfile
from pathlib import Path

from bench.scenario import build
from bench.service import make_emulator, open_session
from bench.sizes import Timing, best_of
from reconciler.company.read import read_company
from reconciler.manifest import load_desired
from reconciler.review.start import StartOptions, start_campaign
from reconciler.state import State

TODAY = datetime.date(2027, 1, 15)


def measure(n: int, *, repeat: int = 1) -> tuple[Timing, int, int, int, int]:
    """Best CPU of the start, its listing calls, items, reviewers and bytes written."""
    scenario = build(n)
    emulator, clock = make_emulator(scenario.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "manifest.yaml").write_text(scenario.manifest, encoding="utf-8")
        del scenario

        def run() -> tuple[int, int, int, int]:
            session = open_session(emulator, clock)
            desired = load_desired(root / "manifest.yaml")
            company = read_company(session.client, desired, State())
            started = start_campaign(desired, company, StartOptions(
                name="q4", due=TODAY + datetime.timedelta(days=14), today=TODAY, fallback="sec@acme.com"))
            out = root / "reviews" / "q4"
            out.mkdir(parents=True, exist_ok=True)
            written = 0
            for name, text in started.files.items():
                written += (out / name).write_text(text, encoding="utf-8")
            return session.client.stats.calls, started.items, started.reviewers, written

        (calls, items, reviewers, written), timing = best_of(repeat, run)
    assert calls == math.ceil(n / 100), calls
    return timing, calls, items, reviewers, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print("| workspaces | listing calls | items | reviewers | files written | review start wall / CPU |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        timing, calls, items, reviewers, written = measure(n, repeat=args.repeat)
        print(f"| {n:,} | {calls} | {items:,} | {reviewers} | {written / 2**20:.1f} MiB | "
              f"{timing.wall:.2f} s / {timing.cpu:.2f} s |")


if __name__ == "__main__":
    main()
