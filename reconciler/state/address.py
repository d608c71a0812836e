"""A ``postgresql://`` state address, parsed without a database driver.

The CLI checks ``--state`` with it before anything else runs, so an address
holding a password is refused before it could be echoed in any message, and
``psycopg`` is imported only by a command that talks to the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from reconciler.errors import StateError

DEFAULT_SCHEMA = "reconciler"
DEFAULT_KEY = "default"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_KEY = re.compile(r"[A-Za-z0-9_.:/@+-]{1,200}")
# Parameters that would put a secret on the command line.
_SECRET_PARAMETERS = ("password", "sslpassword")


# A libpq key=value connection string ("host=db user=ci password=..."): one of
# libpq's keywords, then "=". It names PostgreSQL as surely as a URL does, and
# may hold a password: it is never taken as a file path, and never echoed.
_CONNINFO = re.compile(r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|sslcert|sslkey|"
                       r"sslrootcert|connect_timeout|application_name|options|target_session_attrs)\s*=",
                       re.IGNORECASE | re.ASCII)
_URL_SCHEME = re.compile(r"\s*postgres(ql)?://", re.IGNORECASE | re.ASCII)


def names_postgres(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL database: a ``postgresql://`` or
    ``postgres://`` URL in any letter case, or a key=value connection string."""
    return bool(_URL_SCHEME.match(text) or _CONNINFO.match(text))


def postgres_url(text: str) -> str:
    """``text`` as the URL the backend takes (its scheme lower-cased); a
    ``StateError`` that does not repeat it for a key=value connection string,
    which may hold a password."""
    if _CONNINFO.match(text):
        raise StateError(
            "--state (or RECONCILER_STATE) is a PostgreSQL key=value connection string; give the state's "
            "address as a URL instead, postgresql://USER@HOST:PORT/DB?schema=NAME&key=NAME, with the password "
            "in PGPASSWORD, a password file (PGPASSFILE, or ~/.pgpass) or a service file. The value is not "
            "repeated here, as it may hold a password. Nothing was done.")
    scheme, rest = text.strip().split("://", 1)
    return f"{scheme.lower()}://{rest}"


@dataclass(frozen=True)
class PostgresAddress:
    """A ``postgresql://`` state address: what libpq gets, and which state."""

    conninfo: str  # the URL without schema= and key=: libpq's own parameters only
    schema: str
    key: str
    display: str  # the address as given (it holds no password: one is refused)

    @classmethod
    def parse(cls, url: str) -> PostgresAddress:
        """Parse ``url``; ``StateError`` for a password in it, or a bad schema or key."""
        try:
            parts = urlsplit(url)
            has_password = parts.password is not None
        except ValueError as exc:
            raise StateError(f"--state: the PostgreSQL address is not a valid URL ({exc}).") from None
        query = parse_qsl(parts.query, keep_blank_values=True)
        if has_password or any(name in _SECRET_PARAMETERS for name, _ in query):
            shown = urlunsplit(parts._replace(netloc=_without_password(parts.netloc),
                                              query=urlencode([(n, "***" if n in _SECRET_PARAMETERS else v)
                                                               for n, v in query], safe="/:@*")))
            raise StateError(
                f"The state address {shown} holds a password, which would be seen in the process list, "
                "the shell's history and CI logs. Remove it from the address and give it to libpq as "
                "PGPASSWORD, in a password file (PGPASSFILE, or ~/.pgpass), or in a service file "
                "(PGSERVICEFILE with ?service=NAME). Nothing was done."
            )
        schema = next((v for n, v in query if n == "schema"), DEFAULT_SCHEMA)
        key = next((v for n, v in query if n == "key"), DEFAULT_KEY)
        if not _NAME.fullmatch(schema):
            raise StateError(f"--state: schema={schema!r} is not a plain SQL name (letters, digits, _; at most 63, "
                             "not starting with a digit).")
        if not _KEY.fullmatch(key):
            raise StateError(f"--state: key={key!r} must be 1 to 200 letters, digits or _.:/@+- characters.")
        rest = [(n, v) for n, v in query if n not in ("schema", "key")]
        # The address up to its query, as written: urlunsplit would turn the empty host of a Unix-socket
        # address (postgresql:///db?host=/var/run/postgresql) into postgresql:/db, which libpq rejects.
        base = url.split("#", 1)[0].split("?", 1)[0]
        conninfo = base + (f"?{urlencode(rest, safe='/:@')}" if rest else "")
        return cls(conninfo=conninfo, schema=schema, key=key, display=url)


def _without_password(netloc: str) -> str:
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        return netloc
    user = userinfo.split(":", 1)[0]
    return f"{user}:***@{host}"
