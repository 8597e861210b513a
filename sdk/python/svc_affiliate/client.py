"""Svc(base_url, token): the tracking calls, the management resources, the dashboard reads and a plain
request() for any other route. Every call returns the answer's JSON body as a dict, as the API reference
shows it, and raises SvcError on any other status."""

from __future__ import annotations

import uuid
from typing import Any, Dict, List, Optional, cast
from urllib.parse import quote

from ._retry import IDEMPOTENT, ONCE
from ._transport import Transport, error_of

JSON = Dict[str, Any]

#: The start of the sale 409 that means "already recorded" (not a reused Idempotency-Key).
_DUPLICATE_SALE = "Duplicate transaction_id"


def _body(fields: Dict[str, Any]) -> JSON:
    """The named parameters that were given (None means "not sent")."""
    return {k: v for k, v in fields.items() if v is not None}


def _p(template: str, *ids: Any) -> str:
    """A path with its ids URL-encoded."""
    return template.format(*(quote(str(i), safe="") for i in ids))


class Tracking:
    """``svc.track``: the four tracking calls, each safe to retry.

    Lead, sale and refund carry an Idempotency-Key (the service answers a retry with the recorded
    result); a click carries an event_id (stored once per program). Both are made once per call, so
    every attempt of that call sends the same one. Pass ``idempotency_key`` (an order id, a stored UUID)
    to make retries across processes or restarts safe too.
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def click(self, affiliate_url: str, *, event_id: Optional[str] = None, **fields: Any) -> JSON:
        """POST /api/v1/track/click: a click on a referral link (no token needed).

        ``fields``: page_url, referrer_url, user_agent (the visitor's), session_id, existing_click_id,
        additional_data, ... Returns ``{"success": True, "click_id": ..., ...}``, or ``success`` False
        with ``error`` for an inactive link.
        """
        eid = event_id or str(uuid.uuid4())
        body = {**fields, "affiliate_url": affiliate_url, "event_id": eid}
        answer = self._http.call(
            "POST", "/api/v1/track/click", body=body, auth=False, retry=IDEMPOTENT, retry_key=eid
        )
        return cast(JSON, answer)

    def lead(
        self,
        *,
        click_id: Optional[str] = None,
        customer_key: Optional[str] = None,
        email: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        **fields: Any,
    ) -> JSON:
        """POST /api/v1/track/lead: a signup, by click_id and/or customer_key (server mode with the token)."""
        body = {**fields, **_body({"click_id": click_id, "customer_key": customer_key, "email": email})}
        return self._command("/api/v1/track/lead", body, idempotency_key)

    def sale(
        self,
        *,
        transaction_id: str,
        amount_cents: int,
        customer_key: Optional[str] = None,
        click_id: Optional[str] = None,
        currency: Optional[str] = None,
        coupon_code: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        **fields: Any,
    ) -> JSON:
        """POST /api/v1/track/sale.

        ``coupon_code``: a partner code the customer used (matched case-insensitively; an active code
        attributes the sale to its partner, creating the customer when ``customer_key`` names none).

        ``fields``: sale_type, product_id, is_recurring, subscription_id, subscription_interval,
        line_items, additional_data. A transaction_id that is already recorded returns
        ``{"duplicate": True, "error": ..., "message": ..., "statusCode": 409}``: the sale exists, do not
        send it again.
        """
        body = {
            **fields,
            "transaction_id": transaction_id,
            "amount_cents": amount_cents,
            **_body(
                {
                    "customer_key": customer_key,
                    "click_id": click_id,
                    "currency": currency,
                    "coupon_code": coupon_code,
                }
            ),
        }
        key = idempotency_key or str(uuid.uuid4())
        answer = self._http.send(
            "POST", "/api/v1/track/sale", body=body, idempotency_key=key, retry=IDEMPOTENT
        )
        if 200 <= answer.status < 300:
            return cast(JSON, answer.body)
        error = answer.body.get("error") if isinstance(answer.body, dict) else None
        if answer.status == 409 and isinstance(error, str) and error.startswith(_DUPLICATE_SALE):
            return {"duplicate": True, **answer.body}
        raise error_of(answer, key)

    def refund(
        self,
        *,
        transaction_id: str,
        refund_amount_cents: Optional[int] = None,
        refund_reason: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        **fields: Any,
    ) -> JSON:
        """POST /api/v1/track/refund: reverses (full) or reduces (partial, refund_amount_cents) the commission."""
        body = {
            **fields,
            "transaction_id": transaction_id,
            **_body({"refund_amount_cents": refund_amount_cents, "refund_reason": refund_reason}),
        }
        return self._command("/api/v1/track/refund", body, idempotency_key)

    def discount(self, customer_key: str) -> JSON:
        """GET /api/v1/track/discount: the discount a known customer is owed (its partner's group's processor
        coupon, with the ids to apply at checkout), or ``{"data": None}``."""
        query = {"customer_key": customer_key}
        return cast(JSON, self._http.call("GET", "/api/v1/track/discount", query=query, retry=IDEMPOTENT))

    def _command(self, path: str, body: JSON, idempotency_key: Optional[str]) -> JSON:
        key = idempotency_key or str(uuid.uuid4())
        return cast(JSON, self._http.call("POST", path, body=body, idempotency_key=key, retry=IDEMPOTENT))


class _Resource:
    """GET, PUT and DELETE are retried like tracking calls; a POST only on 429 (twice could act twice)."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def _get(self, path: str, query: Optional[JSON] = None) -> JSON:
        return cast(JSON, self._http.call("GET", path, query=query, retry=IDEMPOTENT))

    def _get_text(self, path: str, query: Optional[JSON] = None) -> str:
        return cast(str, self._http.call("GET", path, query=query, retry=IDEMPOTENT))

    def _post(self, path: str, body: Optional[JSON] = None) -> JSON:
        return cast(JSON, self._http.call("POST", path, body=body, retry=ONCE))

    def _put(self, path: str, body: JSON) -> JSON:
        return cast(JSON, self._http.call("PUT", path, body=body, retry=IDEMPOTENT))

    def _delete(self, path: str) -> Any:
        return self._http.call("DELETE", path, retry=IDEMPOTENT)


_PROGRAMS = "/api/advertiser/affiliate-programs"


class Programs(_Resource):
    def list(self) -> JSON:
        return self._get(_PROGRAMS)

    def create(self, **fields: Any) -> JSON:
        """name, slug, currency, cookie_window_days, commission, allowed_origins, ... The answer holds the
        full tracking token (``data["api_token"]``), shown this once."""
        return self._post(_PROGRAMS, fields)

    def get(self, program_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}", program_id))

    def update(self, program_id: Any, **fields: Any) -> JSON:
        return self._put(_p(_PROGRAMS + "/{}", program_id), fields)

    def delete(self, program_id: Any) -> Any:
        """Soft delete: the program's tracking token is refused from then on."""
        return self._delete(_p(_PROGRAMS + "/{}", program_id))

    def go_live(self, program_id: Any) -> JSON:
        return self._post(_p(_PROGRAMS + "/{}/go-live", program_id))

    def regenerate_token(self, program_id: Any) -> JSON:
        """A new tracking token (shown once); the old one is refused at once."""
        return self._post(_p(_PROGRAMS + "/{}/regenerate-api-token", program_id))


class Partners(_Resource):
    def list(self, program_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/partners", program_id))

    def create(self, program_id: Any, *, name: str, email: str, **fields: Any) -> JSON:
        body = {**fields, "name": name, "email": email}
        return self._post(_p(_PROGRAMS + "/{}/partners", program_id), body)

    def invite(self, program_id: Any, partner_id: Any) -> JSON:
        """A new invite link for the partner (the older one stops working)."""
        return self._post(_p(_PROGRAMS + "/{}/partners/{}/invite", program_id, partner_id))

    def approve(self, program_id: Any, partner_id: Any) -> JSON:
        return self._post(_p(_PROGRAMS + "/{}/partners/{}/approve", program_id, partner_id))

    def reject(self, program_id: Any, partner_id: Any, *, reason: Optional[str] = None) -> JSON:
        path = _p(_PROGRAMS + "/{}/partners/{}/reject", program_id, partner_id)
        return self._post(path, _body({"reason": reason}))


class Links(_Resource):
    def list(self, program_id: Any, partner_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/partners/{}/links", program_id, partner_id))

    def create(self, program_id: Any, partner_id: Any, *, short_link: Optional[str] = None) -> JSON:
        """``short_link`` is generated when omitted."""
        path = _p(_PROGRAMS + "/{}/partners/{}/links", program_id, partner_id)
        return self._post(path, _body({"short_link": short_link}))

    def update(self, program_id: Any, partner_id: Any, link_id: Any, **fields: Any) -> JSON:
        path = _p(_PROGRAMS + "/{}/partners/{}/links/{}", program_id, partner_id, link_id)
        return self._put(path, fields)


class Commissions(_Resource):
    def list(self, program_id: Any, **query: Any) -> JSON:
        """``query``: status, limit, offset."""
        return self._get(_p(_PROGRAMS + "/{}/commissions", program_id), query)

    def mark_paid(self, commission_id: Any) -> JSON:
        return self._post(_p("/api/advertiser/commissions/{}/mark-paid", commission_id))

    def approve(self, commission_id: Any) -> JSON:
        """Clears a review hold."""
        return self._post(_p("/api/advertiser/commissions/{}/approve", commission_id))

    def reject(self, commission_id: Any, *, reason: Optional[str] = None) -> JSON:
        """Reverses a held commission (a ledger deduction)."""
        path = _p("/api/advertiser/commissions/{}/reject", commission_id)
        return self._post(path, _body({"reason": reason}))


class Payouts(_Resource):
    def create(self, program_id: Any) -> JSON:
        """One payout per approved partner with approved commissions in no payout."""
        return self._post(_p(_PROGRAMS + "/{}/payouts", program_id))

    def list(self, program_id: Any, *, status: Optional[str] = None) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/payouts", program_id), _body({"status": status}))

    def get(self, payout_id: Any) -> JSON:
        return self._get(_p("/api/advertiser/payouts/{}", payout_id))

    def mark_paid(self, payout_id: Any, *, reference: Optional[str] = None) -> JSON:
        """Its commissions become paid; a second call raises SvcError 409 ``Payout already paid``."""
        path = _p("/api/advertiser/payouts/{}/mark-paid", payout_id)
        return self._post(path, _body({"reference": reference}))

    def cancel(self, payout_id: Any) -> JSON:
        return self._post(_p("/api/advertiser/payouts/{}/cancel", payout_id))

    def export(self, program_id: Any, *, format: str = "csv", status: Optional[str] = None) -> str:
        """The payouts as CSV text: ``format`` is ``paypal``, ``wise`` or ``csv``."""
        query = _body({"format": format, "status": status})
        return self._get_text(_p(_PROGRAMS + "/{}/payouts/export", program_id), query)


_WEBHOOKS = "/api/advertiser/webhooks"


class Webhooks(_Resource):
    def create(self, *, url: str, **fields: Any) -> JSON:
        """``fields``: events (default ["*"]), program_ids (default None: every program), description.
        The answer holds the endpoint's ``whsec_...`` secret, shown this once: keep it for verify_webhook."""
        return self._post(_WEBHOOKS, {**fields, "url": url})

    def list(self) -> JSON:
        return self._get(_WEBHOOKS)

    def get(self, webhook_id: Any) -> JSON:
        return self._get(_p(_WEBHOOKS + "/{}", webhook_id))

    def update(self, webhook_id: Any, **fields: Any) -> JSON:
        return self._put(_p(_WEBHOOKS + "/{}", webhook_id), fields)

    def delete(self, webhook_id: Any) -> Any:
        return self._delete(_p(_WEBHOOKS + "/{}", webhook_id))

    def rotate_secret(self, webhook_id: Any) -> JSON:
        """A new secret; for 24 hours deliveries are signed with both."""
        return self._post(_p(_WEBHOOKS + "/{}/rotate-secret", webhook_id))

    def test(self, webhook_id: Any) -> JSON:
        """Sends a ``webhook.test`` event to the endpoint."""
        return self._post(_p(_WEBHOOKS + "/{}/test", webhook_id))

    def enable(self, webhook_id: Any) -> JSON:
        return self._post(_p(_WEBHOOKS + "/{}/enable", webhook_id))

    def deliveries(self, webhook_id: Any, **query: Any) -> JSON:
        """``query``: status (pending, delivered, failed), page."""
        return self._get(_p(_WEBHOOKS + "/{}/deliveries", webhook_id), query)

    def retry_delivery(self, delivery_id: Any) -> JSON:
        return self._post(_p("/api/advertiser/webhook-deliveries/{}/retry", delivery_id))


class Dashboard(_Resource):
    """The dashboard reads: a session (``sess_...``) is required, an API key gets 401."""

    def status(self, program_id: Any) -> JSON:
        return self._get(_p("/api/tracking/status/{}", program_id))

    def events(self, program_id: Any, **query: Any) -> JSON:
        """``query``: page, pageSize, eventType, dateFrom, dateTo."""
        return self._get(_p("/api/tracking/events/{}", program_id), query)

    def performance(self, program_id: Any, **query: Any) -> JSON:
        """``query``: period (7d, 30d, 90d, all), dateFrom, dateTo."""
        return self._get(_p("/api/tracking/performance/{}", program_id), query)

    def breakdown(self, program_id: Any, dimension: str, **query: Any) -> JSON:
        """``dimension``: partner, link, country, device, browser, os, referrer, landing_page; ``query``:
        period, dateFrom, dateTo, limit."""
        path = _p("/api/tracking/breakdown/{}", program_id)
        return self._get(path, {**query, "dimension": dimension})


class Rewards(_Resource):
    """How partners are paid differently (docs/rewards.md): groups, placement, overrides, tiers, bonuses."""

    def groups(self, program_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/groups", program_id))

    def create_group(self, program_id: Any, *, name: str, **fields: Any) -> JSON:
        """``fields``: slug, commission (a policy), hold_days, auto_approve, discount."""
        return self._post(_p(_PROGRAMS + "/{}/groups", program_id), {**fields, "name": name})

    def group(self, program_id: Any, group_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/groups/{}", program_id, group_id))

    def update_group(self, program_id: Any, group_id: Any, **fields: Any) -> JSON:
        """Only the fields given change; the default group's commission is the program's."""
        return self._put(_p(_PROGRAMS + "/{}/groups/{}", program_id, group_id), fields)

    def delete_group(self, program_id: Any, group_id: Any) -> Any:
        """Its partners move to the default group; its commissions stay as they are."""
        return self._delete(_p(_PROGRAMS + "/{}/groups/{}", program_id, group_id))

    def place_partner(
        self, program_id: Any, partner_id: Any, *, group_id: Any, locked: Optional[bool] = None
    ) -> JSON:
        """Moves the partner to ``group_id``; ``locked=True`` keeps tier rules from moving it."""
        path = _p(_PROGRAMS + "/{}/partners/{}/group", program_id, partner_id)
        return self._put(path, {"group_id": group_id, **_body({"locked": locked})})

    def set_partner_commission(self, program_id: Any, partner_id: Any, commission: Optional[JSON]) -> JSON:
        """The partner's own policy; None clears it."""
        path = _p(_PROGRAMS + "/{}/partners/{}/commission", program_id, partner_id)
        return self._put(path, {"commission": commission})

    def tier_rules(self, program_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/tier-rules", program_id))

    def set_tier_rules(self, program_id: Any, rules: List[JSON]) -> JSON:
        """Replaces the whole ladder (``[]`` removes it)."""
        path = _p(_PROGRAMS + "/{}/tier-rules", program_id)
        return cast(JSON, self._http.call("PUT", path, body=rules, retry=IDEMPOTENT))

    def bonuses(self, program_id: Any) -> JSON:
        return self._get(_p(_PROGRAMS + "/{}/bonuses", program_id))

    def create_bonus(self, program_id: Any, **fields: Any) -> JSON:
        """``fields``: name, group_ids, metric, threshold, amount_cents, period, starts_at, ends_at."""
        return self._post(_p(_PROGRAMS + "/{}/bonuses", program_id), fields)

    def delete_bonus(self, program_id: Any, bonus_id: Any) -> Any:
        return self._delete(_p(_PROGRAMS + "/{}/bonuses/{}", program_id, bonus_id))


class Svc:
    """The client.

    Args:
        base_url: where svc answers, e.g. ``https://svc.example.com``.
        token: the bearer credential: the program's tracking token ``aff_...`` for lead, sale and refund,
            a management key ``affk_...`` or a dashboard session ``sess_...`` for the other calls. A click
            needs none.
        max_retries: retries after the first attempt (429, 502, 503, 504, network errors, timeouts).
        timeout: seconds per attempt for connecting and for each read.
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        *,
        max_retries: int = 3,
        timeout: float = 10.0,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.lower().startswith(("http://", "https://")):
            raise ValueError("Svc(base_url): base_url must be an http(s) URL")
        self._http = Transport(base_url, token, max_retries, timeout)
        self.track = Tracking(self._http)
        self.programs = Programs(self._http)
        self.partners = Partners(self._http)
        self.links = Links(self._http)
        self.commissions = Commissions(self._http)
        self.payouts = Payouts(self._http)
        self.webhooks = Webhooks(self._http)
        self.dashboard = Dashboard(self._http)
        self.rewards = Rewards(self._http)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[JSON] = None,
        idempotency_key: Optional[str] = None,
        retry: Optional[str] = None,
        anonymous: bool = False,
    ) -> Any:
        """Any route: ``svc.request("GET", "/api/advertiser/api-keys")``.

        Returns the parsed JSON (the text for a non-JSON answer, None for an empty one) of a 2xx answer;
        raises SvcError otherwise. ``retry``: ``"idempotent"`` (429, 502, 503, 504, network errors and
        timeouts) or ``"once"`` (429 only); default idempotent for GET, HEAD, PUT, DELETE and for a call
        with an idempotency_key, else once.
        """
        upper = method.upper()
        safe = upper in ("GET", "HEAD", "PUT", "DELETE") or idempotency_key is not None
        return self._http.call(
            upper,
            path,
            body=body,
            query=query,
            auth=not anonymous,
            idempotency_key=idempotency_key,
            retry=retry or (IDEMPOTENT if safe else ONCE),
        )
