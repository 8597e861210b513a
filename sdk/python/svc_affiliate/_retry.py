"""When a call is sent again and how long it waits first (the same rules as the TypeScript SDK)."""

from __future__ import annotations

import random as _random
import re
import time
from email.utils import parsedate_to_datetime
from typing import Callable, Optional

#: Statuses that mean "not done now, try again later": rate limited, or the service (or a proxy) unavailable.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

#: ``idempotent``: sending the call twice has the effect of sending it once (lead, sale and refund with
#: their Idempotency-Key, a click with its event_id, GET, PUT, DELETE): retried on RETRY_STATUSES,
#: network errors and timeouts. ``once``: a POST that would act twice (creating a partner, a payout):
#: retried only on 429, which says the request was refused before it was processed.
IDEMPOTENT = "idempotent"
ONCE = "once"

BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
#: A Retry-After longer than this (seconds) is not waited for: the call fails with the answer instead.
MAX_RETRY_AFTER = 60.0

_SECONDS = re.compile(r"^\d+(\.\d+)?$")


def is_retryable(mode: str, status: Optional[int]) -> bool:
    """Whether an attempt that ended with ``status`` (None: no answer at all) is tried again."""
    if status is None:
        return mode == IDEMPOTENT
    if mode == ONCE:
        return status == 429
    return status in RETRY_STATUSES


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """A Retry-After header in seconds: delay-seconds (``2``, also ``1.5``) or an HTTP date.

    None when absent or unreadable; a date in the past is 0.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _SECONDS.match(text):
        return float(text)
    if not re.search(r"[a-zA-Z]", text):
        return None
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None or at.tzinfo is None:
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


def retry_delay(
    retry: int, retry_after: Optional[float], rand: Callable[[], float] = _random.random
) -> Optional[float]:
    """Seconds to wait before retry number ``retry`` (0 for the first), or None not to retry.

    With Retry-After: what the service asked for plus up to 10 % (at most 1 s) of jitter; None when it
    asked for more than MAX_RETRY_AFTER. Without: exponential backoff with "equal jitter", between half
    and all of BASE * 2**retry (capped at BACKOFF_CAP).
    """
    if retry_after is not None:
        if retry_after > MAX_RETRY_AFTER:
            return None
        return retry_after + rand() * min(1.0, retry_after * 0.1)
    step = min(BACKOFF_CAP, BACKOFF_BASE * (2.0**retry))
    return step / 2 + rand() * step / 2
