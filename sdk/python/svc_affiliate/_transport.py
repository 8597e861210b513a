"""One HTTP call with its retries: urllib from the standard library, a timeout per attempt, the same body
and Idempotency-Key on every attempt, and the answer parsed."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

from ._retry import is_retryable, parse_retry_after, retry_delay
from .errors import SvcError

USER_AGENT = "svc-affiliate-python/0.1.0"


class Answer(NamedTuple):
    status: int
    headers: Mapping[str, str]
    #: JSON parsed, the text when not JSON, None when empty.
    body: Any


def _parse(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type.lower():
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def error_of(answer: Answer, idempotency_key: Optional[str]) -> SvcError:
    """The SvcError for an error answer: the body's ``error`` string when it has one."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        text = body["error"]
    elif isinstance(body, str) and body:
        text = body[:200]
    else:
        text = f"HTTP {answer.status}"
    return SvcError(
        answer.status,
        text,
        body=body,
        idempotency_key=idempotency_key,
        retry_after=parse_retry_after(answer.headers.get("retry-after")),
    )


class Transport:
    def __init__(
        self,
        base_url: str,
        token: Optional[str],
        max_retries: int,
        timeout: float,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.max_retries = max_retries
        self.timeout = timeout
        self._sleep = sleep
        self._opener = urllib.request.build_opener()

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        pairs = []
        for name, value in (query or {}).items():
            if value is None:
                continue
            for v in value if isinstance(value, (list, tuple)) else [value]:
                pairs.append((name, _query_text(v)))
        qs = urllib.parse.urlencode(pairs)
        return f"{self.base_url}{path if path.startswith('/') else '/' + path}{'?' + qs if qs else ''}"

    def send(
        self,
        method: str,
        path: str,
        *,
        retry: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        auth: bool = True,
        idempotency_key: Optional[str] = None,
        retry_key: Optional[str] = None,
    ) -> Answer:
        """The final answer, whatever its status (after retries); raises SvcError only without one."""
        url = self.url(path, query)
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        payload = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            payload = json.dumps(body, separators=(",", ":")).encode("utf-8")
        attempt = 0
        while True:
            answer: Optional[Answer] = None
            failure: Optional[BaseException] = None
            try:
                answer = self._attempt(url, method, headers, payload)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
                failure = err
            retry_after = parse_retry_after(answer.headers.get("retry-after")) if answer else None
            delay = None
            if attempt < self.max_retries and is_retryable(retry, answer.status if answer else None):
                delay = retry_delay(attempt, retry_after)
            if delay is None:
                if answer is not None:
                    return answer
                raise SvcError(
                    0,
                    _describe(failure, self.timeout, attempt + 1),
                    idempotency_key=retry_key or idempotency_key,
                ) from failure
            self._sleep(delay)
            attempt += 1

    def call(self, method: str, path: str, **options: Any) -> Any:
        """send() for a route whose every non-2xx answer is an error."""
        answer = self.send(method, path, **options)
        if 200 <= answer.status < 300:
            return answer.body
        raise error_of(answer, options.get("retry_key") or options.get("idempotency_key"))

    def _attempt(self, url: str, method: str, headers: Dict[str, str], payload: Optional[bytes]) -> Answer:
        request = urllib.request.Request(url, data=payload, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as res:
                raw = res.read()
                return Answer(
                    res.status, _lower(res.headers), _parse(raw, res.headers.get("content-type", ""))
                )
        except urllib.error.HTTPError as err:
            try:
                raw = err.read()
            finally:
                err.close()
            return Answer(err.code, _lower(err.headers), _parse(raw, err.headers.get("content-type", "")))


def _lower(headers: Any) -> Dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _describe(failure: Optional[BaseException], timeout: float, attempts: int) -> str:
    tries = "" if attempts == 1 else f" ({attempts} attempts)"
    reason = getattr(failure, "reason", failure)
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return f"No answer within {timeout:g} s{tries}"
    return f"Network error: {reason!r}{tries}"
