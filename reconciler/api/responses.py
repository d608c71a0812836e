"""Reading the service's answers: JSON bodies, the error envelope, unwrapping.

Successful answers are ``{data: {<name>: ...}}``; errors are
``{error: {code, message}}``.  Anything else still yields a readable error
(``InvalidResponse``, or the status's own class with an excerpt of the body)
rather than a ``KeyError`` or a ``JSONDecodeError``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

JsonObject = dict[str, Any]

_EXCERPT_CHARS = 200


class BodyError(Exception):
    """A body that cannot be read as documented; the caller names the call."""


def error_details(response: httpx.Response) -> tuple[str | None, str]:
    """``(code, message)`` of an error answer.

    From the ``{error: {code, message}}`` envelope when the body is one;
    otherwise no code, and a message quoting the start of the body.
    """
    try:
        doc = json.loads(response.content) if response.content else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        envelope = doc["error"]
        code = envelope.get("code")
        message = envelope.get("message")
        return (
            code if isinstance(code, str) and code else None,
            message if isinstance(message, str) and message.strip() else "(no message given)",
        )
    if not response.content:
        return None, "(the answer had no body)"
    return None, f"(the answer is not the documented error envelope; it begins: {excerpt(response)})"


def json_object(response: httpx.Response) -> JsonObject:
    """The body as a JSON object; ``BodyError`` when it is not one."""
    try:
        doc = json.loads(response.content)
    except ValueError:
        raise BodyError(f"the body is not JSON; it begins: {excerpt(response)}") from None
    if not isinstance(doc, dict):
        raise BodyError(f"the body is JSON but not an object; it begins: {excerpt(response)}")
    return doc


def unwrap(doc: JsonObject, name: str) -> Any:
    """``doc["data"][name]``; ``BodyError`` naming what is missing."""
    data = doc.get("data")
    if not isinstance(data, dict):
        raise BodyError("the body has no 'data' object")
    if name not in data:
        found = ", ".join(repr(k) for k in data) or "nothing"
        raise BodyError(f"'data' has no {name!r} (it has {found})")
    return data[name]


def excerpt(response: httpx.Response) -> str:
    """The start of the body, on one line, quoted."""
    text = " ".join(response.content[: _EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    if not text:
        return "''"
    return repr(text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else ""))
