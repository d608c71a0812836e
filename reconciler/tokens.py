"""A bearer token read the one way every command reads one: ``--token-file FILE``, else an environment variable.

Never from the command line, where any process of the machine and the shell's history would have it; never
in a message.  A token file other users of the machine can read gets a warning (``chmod 600``), not a
refusal: a mounted secret may well be so.  The service's token (``RECONCILER_TOKEN``), the directory
server's (``RECONCILER_DIRECTORY_TOKEN``) and the pulled SCIM service's (``RECONCILER_DIRECTORY_PULL_TOKEN``)
are all read here.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from reconciler.errors import ConfigError


def read_token(token_file: Path | None, env: Mapping[str, str], env_name: str, *,
               warn: Callable[[str], None] | None = None, after: str = "") -> str | None:
    """The token: ``token_file``'s text (stripped), else ``env[env_name]``; None when neither gives one.
    A token file that cannot be read, or is empty, is a ``ConfigError`` ending with ``after`` (what was
    not done, e.g. " Nothing was served.")."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
            mode = token_file.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            raise ConfigError(f"Cannot read the token file {token_file}: {reason}.{after}") from None
        if not token:
            raise ConfigError(f"The token file {token_file} is empty.{after}")
        if mode & 0o077 and warn is not None:
            warn(f"Warning: the token file {token_file} can be read by other users of this machine (mode "
                 f"{stat.filemode(mode)}); 'chmod 600 {token_file}' keeps it yours.")
        return token
    return env.get(env_name, "").strip() or None
