"""Manifest load against libyaml's event parse: ``python -m bench.load_floor``.

The manifest of ``bench/scenario.py`` (N workspaces, 25 entries each) loaded
by ``load_desired`` (read, check, validate, build the Desired nodes: what
every command does first), against libyaml's event parse of the same text:
the events of ``yaml.parse`` with the C parser, taken one by one and
dropped (what any reader of the events pays before it does anything with
them), and, below that, the C parser alone (``CParser.raw_parse``: libyaml
makes the events and frees them, no Python object is made).  Each is the
best CPU of ``--repeat`` runs, taken in turns, with the cyclic GC paused, as
the tool's own loading runs.  Prints the markdown rows for bench/README.md:

    .venv/bin/python -m bench.load_floor --size 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from bench.scenario import build
from bench.sizes import best_of
from reconciler.gcpause import gc_paused
from reconciler.manifest import load_desired


def event_parse(text: str) -> int:
    """libyaml's events of ``text``, each made into PyYAML's event object and dropped."""
    count = 0
    for _ in yaml.parse(text, Loader=yaml.CSafeLoader):
        count += 1
    return count


def raw_parse(text: str) -> int:
    """libyaml's events of ``text`` made and freed in C (no Python object per event)."""
    parser = yaml.CSafeLoader(text)
    try:
        count: int = parser.raw_parse()
        return count
    finally:
        parser.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = build(args.size).manifest
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "manifest.yaml"
        manifest.write_text(text, encoding="utf-8")
        # In turns, the best of each kept: the machine's speed drifts over minutes (a virtual
        # machine's CPU time counts the time its host lends elsewhere), and a ratio of runs taken
        # apart would read that drift as well as the code.
        floors, raws, loads = [], [], []
        for _ in range(args.repeat):
            events, timing = best_of(1, gc_paused()(lambda: event_parse(text)))
            floors.append(timing)
            raws.append(best_of(1, gc_paused()(lambda: raw_parse(text)))[1])
            loads.append(best_of(1, lambda: load_desired(manifest))[1])
        floor, raw, load = (min(timings, key=lambda t: t.cpu) for timings in (floors, raws, loads))
    print(f"| {args.size:,} workspaces × 25 entries ({len(text) / 2**20:.1f} MiB, {events:,} events) | CPU | load / it |")
    print("|---|---:|---:|")
    print(f"| `load_desired` | {load.cpu:.2f} s | |")
    print(f"| floor: libyaml's event parse (`yaml.parse`, C parser) | {floor.cpu:.2f} s | {load.cpu / floor.cpu:.2f}× |")
    print(f"| libyaml alone, no Python event (`CParser.raw_parse`) | {raw.cpu:.2f} s | {load.cpu / raw.cpu:.2f}× |")


if __name__ == "__main__":
    main()
