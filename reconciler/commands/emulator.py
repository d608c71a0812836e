"""``reconciler emulator serve``: the service emulator as a local HTTP server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.errors import ConfigError

if TYPE_CHECKING:
    from reconciler.emulator import Emulator


def serve_emulator(*, host: str, port: int, seed: Path | None, data: Path | None, announce: Callable[[str], None],
                   faults: tuple[str, ...] = (), fault_seed: int = 0, time_scale: float = 1.0,
                   warn: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; once listening, ``warn`` gets the warning for a
    network address with the publicly known demo token, then ``announce`` the
    address.  A port that cannot be listened on is a ``ConfigError``."""
    from reconciler.emulator.server import exposure_warning, serve

    emulator = make_served_emulator(seed=seed, data=data, faults=faults, fault_seed=fault_seed, time_scale=time_scale)
    warning = exposure_warning(emulator, host)

    def ready(url: str) -> None:
        if warning and warn is not None:
            warn(warning)
        announce(url)  # the first line is the bare address: RECONCILER_BASE_URL=$(... | head -n 1)
        announce(f"Emulator listening on {url} (Ctrl-C stops it).")

    serve(emulator, host=host, port=port, ready=ready)


def make_served_emulator(*, seed: Path | None, data: Path | None, faults: tuple[str, ...] = (),
                         fault_seed: int = 0, time_scale: float = 1.0) -> Emulator:
    """The emulator ``emulator serve`` runs: its clock scaled, its faults registered."""
    from reconciler.clock import ScaledClock, SystemClock
    from reconciler.emulator import Emulator

    clock = SystemClock() if time_scale == 1.0 else ScaledClock(time_scale)
    emulator = (Emulator.from_file(data, seed_path=seed, clock=clock, fault_seed=fault_seed) if data
                else Emulator.from_seed_file(seed, clock=clock, fault_seed=fault_seed))
    for spec in faults:
        try:
            emulator.faults.inject_spec(spec)
        except ValueError as exc:
            raise ConfigError(f"--fault {spec!r}: {exc}.") from None
    return emulator
