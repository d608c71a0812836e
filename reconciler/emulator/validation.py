"""Checks on request bodies: shapes, formats and enumerations.

Every failure is a 400 ``BAD_REQUEST`` whose message names the offending
field, since the description shows no per-field error detail.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping
from typing import Any

from reconciler.emulator.errors import bad_request
from reconciler.text import plural
from reconciler.vocabulary import ROLES


# Deliberately simple: one @, no spaces, a dotted domain part.
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_MIME = re.compile(r"^[\w.+-]+/[\w.+-]+(\s*;.*)?$")


def require_object(value: Any, what: str = "The request body") -> dict[str, Any]:
    """``value`` if it is a JSON object, else 400."""
    if not isinstance(value, dict):
        raise bad_request(f"{what} must be a JSON object.")
    return value


def reject_unknown_keys(body: Mapping[str, Any], allowed: Collection[str], what: str = "body") -> None:
    """400 naming the first key of ``body`` not in ``allowed``."""
    for key in body:
        if key not in allowed:
            raise bad_request(f"Unknown {what} field {key!r}; allowed: {', '.join(sorted(allowed))}.")


def string_field(body: Mapping[str, Any], key: str, *, required: bool = False, min_length: int = 0) -> str | None:
    """The string at ``key`` (None when absent and optional), else 400."""
    if key not in body or body[key] is None:
        if required:
            raise bad_request(f"The field {key!r} is required.")
        return None
    value = body[key]
    if not isinstance(value, str):
        raise bad_request(f"The field {key!r} must be a string.")
    if len(value) < min_length:
        raise bad_request(f"The field {key!r} must have at least {plural(min_length, 'character')}.")
    return value


def bool_field(body: Mapping[str, Any], key: str, *, required: bool = False) -> bool | None:
    """The boolean at ``key`` (None when absent and optional), else 400."""
    if key not in body:
        if required:
            raise bad_request(f"The field {key!r} is required.")
        return None
    value = body[key]
    if not isinstance(value, bool):
        raise bad_request(f"The field {key!r} must be a boolean.")
    return value


def role(value: Any, where: str) -> str:
    """A WorkspaceRole, else 400."""
    if value not in ROLES:
        raise bad_request(f"{where}: role {value!r} is not one of {', '.join(ROLES)}.")
    return str(value)


def email(value: Any, where: str) -> str:
    """A lower-cased email address, else 400."""
    if not isinstance(value, str) or not _EMAIL.match(value.strip()):
        raise bad_request(f"{where}: {value!r} is not an email address.")
    return value.strip().lower()


def hostname(value: Any, where: str) -> str:
    """A lower-cased hostname of at least two labels (a trailing dot is dropped), else 400."""
    if not isinstance(value, str):
        raise bad_request(f"{where}: {value!r} is not a hostname.")
    host = value.strip().lower().removesuffix(".")
    labels = host.split(".")
    if len(host) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise bad_request(f"{where}: {value!r} is not a hostname.")
    return host


def date(value: Any, where: str) -> str:
    """A ``YYYY-MM-DD`` date string, else 400."""
    if not isinstance(value, str):
        raise bad_request(f"{where} must be a date (YYYY-MM-DD).")
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise bad_request(f"{where} must be a date (YYYY-MM-DD), not {value!r}.") from None
    if len(value) != 10:
        raise bad_request(f"{where} must be a date (YYYY-MM-DD), not {value!r}.")
    return value


def mime_type(value: Any, where: str) -> str:
    """A ``type/subtype`` media type, else 400."""
    if not isinstance(value, str) or not _MIME.match(value):
        raise bad_request(f"{where}: {value!r} is not a media type (type/subtype).")
    return value


def string_list(body: Mapping[str, Any], key: str) -> list[str] | None:
    """The list of strings at ``key`` (None when absent), else 400."""
    if key not in body:
        return None
    value = body[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_request(f"The field {key!r} must be an array of strings.")
    return list(value)
