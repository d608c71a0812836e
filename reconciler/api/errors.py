"""Errors of the API client: one class per kind of answer (or of no answer).

    ApiError (reconciler.errors.ReconcilerError)
    ├── BadRequest          400
    ├── Unauthorized        401
    ├── Forbidden           403
    ├── NotFound            404
    ├── Conflict            409
    ├── RateLimited         429, after the retries were used up
    ├── ServerError         5xx, after the retries allowed for the call
    ├── UnexpectedStatus    any other status that is not a success
    ├── ConnectionFailed    no answer at all (status None)
    │   └── AnswerTooSlow   an answer still arriving when --timeout ran out
    ├── InvalidResponse     an answer that is not JSON or not of the documented shape
    │   ├── ResponseTooLarge    an answer bigger than MAX_BODY_BYTES
    │   └── InconsistentListing pages that contradict each other (endless, repeating)
    ├── WaitTooLong         the service asked for a wait beyond MAX_WAIT_SECONDS
    └── UploadFailed        the storage provider refused the bytes of a file

Raised by the client itself, with no error answer of the service behind them:

    ReconcilerError
    ├── UploadExpired       a file's upload address expired before its bytes were sent
    ├── NotReadyInTime      a bounded wait (upload visible, file converted) ran out
    └── UnsafeId            an id that would change the request path ("." or "..")

The bounds behind AnswerTooSlow, ResponseTooLarge, InconsistentListing and
WaitTooLong are in ``limits.py``; none of these is ever retried.

Every error keeps the call (``method`` and ``path``, the path without host or
query string, so a presigned upload address never leaks its signature) and,
where the service sent one, the ``{error: {code, message}}`` of the body.
``str()`` of an error is one paragraph: what was answered to which call, and
what to do about it.  No message ever contains the token.
"""

from __future__ import annotations

from typing import ClassVar

from reconciler.errors import ReconcilerError


class ApiError(ReconcilerError):
    """The service answered a call with an error, or did not answer."""

    hint: ClassVar[str] = ""

    def __init__(
        self,
        *,
        method: str,
        path: str,
        message: str,
        status: int | None = None,
        code: str | None = None,
        attempts: int = 1,
        outcome: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.message = message
        self.status = status
        self.code = code
        self.attempts = attempts
        # Whether a change may have been made, for answers that leave it open
        # (5xx, no answer); empty when the answer settles it.
        self.outcome = outcome
        super().__init__(self._describe())

    @property
    def call(self) -> str:
        """The call in the form ``PATCH /workspace-users/wu_1``."""
        return f"{self.method} {self.path}"

    def _describe(self) -> str:
        answer = " ".join(str(part) for part in (self.status, self.code) if part is not None)
        return _paragraph(f"The service answered {answer} to {self.call}:", self.message, self._hint())

    def _hint(self) -> str:
        return self.hint

    def __str__(self) -> str:
        return self._describe()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, call={self.call!r})"


class BadRequest(ApiError):
    hint = ("The service did not accept the request as sent; check the values involved, and if they "
            "look right, report this as a bug in reconciler.")


class Unauthorized(ApiError):
    hint = ("Check the token in RECONCILER_TOKEN or in the file given with --token-file: it is "
            "missing, wrong or no longer valid.")


class Forbidden(ApiError):
    hint = ("The token's company may not do this; publishing workspaces also needs a verified "
            "company.")


class NotFound(ApiError):
    hint = "The resource may have been deleted, or may belong to another company."


class Conflict(ApiError):
    hint = ("The change conflicts with the service's current state (when connecting: the "
            "workspace belongs to another account, or is already in another group).")


class RateLimited(ApiError):
    def _hint(self) -> str:
        # outcome is set when an earlier attempt may have made the change.
        return _paragraph(f"The company's rate limit was still exceeded after {self.attempts} attempts; other "
                          "tools may share the company's quota. Lower the client's rate limits or try later.",
                          self.outcome)


class ServerError(ApiError):
    """A 5xx answer.  ``outcome`` says whether the change may have been made."""

    def _hint(self) -> str:
        tried = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return _paragraph(f"The service failed{tried}; try again later.", self.outcome)


class UnexpectedStatus(ApiError):
    hint = "The service's description does not document this answer."


class ConnectionFailed(ApiError):
    """No answer: the connection failed, broke, or timed out (status None)."""

    def _describe(self) -> str:
        tried = f" ({self.attempts} attempts)" if self.attempts > 1 else ""
        return _paragraph(f"No answer from the service to {self.call}{tried}:", self.message,
                          "Check the address and the network.", self.outcome)


class UnverifiedCertificate(ConnectionFailed):
    """The service's TLS certificate could not be verified (``message`` says why and what to do:
    ``unverified_certificate``).  Not retried: it would be refused again."""

    def _describe(self) -> str:
        return _paragraph(f"No secure connection to the service for {self.call}: {self.message}.", self.outcome)


class AnswerTooSlow(ConnectionFailed):
    """The answer was still arriving when the whole-answer deadline
    (``--timeout``) ran out: a service trickling its bytes.  Not retried, since
    the next attempt would most likely trickle just the same."""

    def _describe(self) -> str:
        return _paragraph(f"The service's answer to {self.call} was not complete in time:", self.message,
                          "reconciler did not send the call again. If the service is known to be this slow, "
                          "raise --timeout.", self.outcome)


class WaitTooLong(ApiError):
    """The service asked for a wait longer than ``MAX_WAIT_SECONDS``; nothing
    was waited (status 429 when a 429 asked, None when an earlier answer's
    ``X-RateLimit-*`` headers did)."""

    def _describe(self) -> str:
        return _paragraph(f"The service asked reconciler to wait before {self.call}, for longer than it "
                          "ever waits:", self.message,
                          "Nothing was waited and the call was not sent again. Another tool may be using up "
                          "the company's quota; try again later.", self.outcome)


class InvalidResponse(ApiError):
    """An answer that is not JSON, or not of the shape the description documents."""

    def _describe(self) -> str:
        status = f" {self.status}" if self.status is not None else ""
        return _paragraph(f"The service answered{status} to {self.call} with an answer reconciler "
                          "cannot read:", self.message,
                          "The address may not be the service's, or the service changed its interface.")


class ResponseTooLarge(InvalidResponse):
    """An answer bigger than ``MAX_BODY_BYTES``: reading stopped at the cap."""

    def _describe(self) -> str:
        status = f" {self.status}" if self.status is not None else ""
        return _paragraph(f"The service's answer{status} to {self.call} is too large:", self.message,
                          "The address may not be the service's; if it is, a smaller --page-size makes "
                          "each page smaller.", self.outcome)


class InconsistentListing(InvalidResponse):
    """Pages of a listing that contradict each other or never end: more items
    than ``pageInfo.total``, ids repeated, ``hasNextPage`` past ``pages``."""

    def _describe(self) -> str:
        return _paragraph(f"The pages of {self.call} do not add up, so the listing was stopped:", self.message,
                          "The company's data may have changed while it was read (run the command again), "
                          "or the service ignores 'page' or misreports pageInfo.")


class UploadFailed(ApiError):
    """The storage provider refused the bytes (PUT to the presigned address)."""

    def _describe(self) -> str:
        answer = "gave no answer" if self.status is None else f"answered {self.status}"
        tried = f" ({self.attempts} attempts)" if self.attempts > 1 else ""
        return _paragraph(f"The storage provider {answer} to {self.call}{tried}:", self.message,
                          "The upload address may have expired (it is valid for one hour), or the "
                          "Content-Type differs from the mimeType the file was created with.")


class UploadExpired(ReconcilerError):
    """The upload address expired (per the clock) before the bytes were sent."""


class NotReadyInTime(ReconcilerError):
    """A bounded wait on the service ran out; ``last`` is what it said last."""

    def __init__(self, message: str, *, last: object = None) -> None:
        self.last = last
        super().__init__(message)


class UnsafeId(ReconcilerError, ValueError):
    """An id that cannot be put into a request path: ``.`` and ``..`` would
    be read as "this folder" and "the folder above" and so send the call to
    another address (``PATCH /workspace-sections/..`` would become
    ``PATCH /v1``).  No real id is either; a ``ValueError`` too, as every
    argument the client refuses is."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
}


def error_class_for(status: int) -> type[ApiError]:
    """The class of error that stands for an answer of ``status``."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 500 <= status <= 599:
        return ServerError
    return UnexpectedStatus


def _paragraph(*parts: str) -> str:
    """Join sentences into one paragraph, each ending with a full stop."""
    out: list[str] = []
    for part in parts:
        part = " ".join(part.split())
        if not part:
            continue
        if part[-1] not in ".:!?":
            part += "."
        out.append(part)
    return " ".join(out)


def unverified_certificate(exc: BaseException) -> str | None:
    """When a connection failed because the other side's TLS certificate could not be verified (an
    ``ssl.SSLCertVerificationError`` among the causes of ``exc``): the words that say so and what to do,
    for a client's message (they begin in lower case and end without a full stop); else None.

    The requester of both clients (the service's and the SCIM pull's) raises ``UnverifiedCertificate`` with
    them: the generic advice of a failed connection (check the address and the network) does not help
    there, --ca-bundle does."""
    import ssl  # here, not at the top: every command imports this module, few open a connection

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or cause.reason or "no reason given"
            return (f"its TLS certificate could not be verified ({reason}). If a private certificate authority (a "
                    "company's own) signed it, give that authority's certificate (PEM) with --ca-bundle FILE; "
                    "verification cannot be turned off")
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None
