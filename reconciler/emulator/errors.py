"""The service's error envelope, raised from anywhere inside a handler.

Handlers raise ``ServiceError``; the core turns it into
``{"error": {"code", "message"}}`` with the status, so no handler builds an
error body by hand and every error looks the same.
"""

from __future__ import annotations

# The codes of the description's error table.  409 has no documented code;
# ``CONFLICT`` is the conventional choice (see README).
CODES: dict[int, str] = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    429: "RATE_LIMIT_EXCEEDED",
    500: "INTERNAL_SERVER_ERROR",
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
    504: "GATEWAY_TIMEOUT",
}


def code_for(status: int) -> str:
    """The ``error.code`` the emulator uses for an HTTP status."""
    return CODES.get(status, "INTERNAL_SERVER_ERROR" if status >= 500 else "BAD_REQUEST")


class ServiceError(Exception):
    """An error answer: HTTP status, error code and a human message."""

    def __init__(self, status: int, message: str, *, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or code_for(status)
        self.message = message
        self.headers = headers or {}

    def envelope(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message}}


def bad_request(message: str) -> ServiceError:
    return ServiceError(400, message)


def not_found(message: str) -> ServiceError:
    return ServiceError(404, message)


def forbidden(message: str) -> ServiceError:
    return ServiceError(403, message)


def conflict(message: str) -> ServiceError:
    return ServiceError(409, message)
