"""Verifying svc's outbound webhooks (Standard Webhooks, standardwebhooks.com).

The signature is HMAC-SHA256 over ``<webhook-id>.<webhook-timestamp>.<raw body>``, keyed by the
base64-decoded part of the endpoint's ``whsec_...`` secret, sent as ``v1,<base64>`` (several,
space-separated, while a secret rotates).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Mapping, Optional, Union, cast

from .errors import WebhookVerificationError

_SECRET_PREFIX = "whsec_"
_TIMESTAMP = re.compile(r"^\d{1,15}$")


def verify_webhook(
    body: Union[bytes, str],
    headers: Mapping[str, Any],
    secret: str,
    *,
    tolerance: int = 300,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Checks that ``body`` was sent by svc with ``secret`` and recently; returns the parsed event.

    ``body`` must be the raw bytes as received (not JSON re-serialised by a framework). ``headers`` is
    any mapping of the request's headers, names in any case (a dict, ``request.headers`` of Flask,
    Django or Starlette). ``tolerance``: how many seconds ``webhook-timestamp`` may be from now, either
    way. Raises WebhookVerificationError otherwise.
    """
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError(
            "Missing required headers (webhook-id, webhook-timestamp, webhook-signature)"
        )
    if not _TIMESTAMP.match(timestamp):
        raise WebhookVerificationError("Invalid webhook-timestamp")
    now_seconds = int(time.time() if now is None else now)
    sent_at = int(timestamp)
    if sent_at < now_seconds - tolerance:
        raise WebhookVerificationError("Message timestamp too old")
    if sent_at > now_seconds + tolerance:
        raise WebhookVerificationError("Message timestamp too new")

    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    key = _secret_bytes(secret)
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode("utf-8") + raw, hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue
        try:
            signature = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(signature, expected):
            try:
                event = json.loads(raw.decode("utf-8"))
            except ValueError as err:
                raise WebhookVerificationError("The body is not JSON") from err
            return cast(Dict[str, Any], event)
    raise WebhookVerificationError("No matching signature found")


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    value = headers.get(name)
    if value is None:
        for key, v in headers.items():
            if key.lower() == name:
                value = v
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value


def _secret_bytes(secret: str) -> bytes:
    encoded = secret.removeprefix(_SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise WebhookVerificationError("The secret is not a whsec_ secret (base64 after the prefix)")
    return key
