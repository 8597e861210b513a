"""The exceptions the client raises."""

from __future__ import annotations

from typing import Any, Optional


class SvcError(Exception):
    """A call that did not succeed: an error answer, or no answer at all after every retry.

    Attributes:
        status: the HTTP status, or 0 when no answer came (network error, timeout).
        error: the service's ``error`` string, or what went wrong on the way.
        body: the parsed answer (a dict for JSON, else the text); None without an answer.
        idempotency_key: the Idempotency-Key the call carried (lead, sale, refund), or the click's
            event_id. Retrying later with the same key is answered with the recorded result instead of
            recording the event twice.
        retry_after: the answer's Retry-After in seconds, when it had one.
    """

    def __init__(
        self,
        status: int,
        error: str,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(error if status == 0 else f"{status}: {error}")
        self.status = status
        self.error = error
        self.body = body
        self.idempotency_key = idempotency_key
        self.retry_after = retry_after


class WebhookVerificationError(Exception):
    """verify_webhook's refusal: a missing header, a bad or stale signature, or a body that is not JSON."""
