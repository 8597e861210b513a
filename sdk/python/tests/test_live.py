"""The Python SDK against a running svc. The project's test suite (test/integration/sdk-python.test.ts)
starts the service, makes a program, a partner with a link, a management key and a session, and two
proxies that spoil the first sale they see, then runs this file with them in the environment:

    SVC_BASE_URL, SVC_TRACKING_TOKEN, SVC_API_KEY, SVC_SESSION, SVC_PROGRAM_ID, SVC_PARTNER_ID,
    SVC_AFFILIATE_URL, SVC_RUN, SVC_PROXY_503_URL, SVC_TXN_503, SVC_PROXY_DROP_URL, SVC_TXN_DROP,
    SVC_COUPON_CODE (the partner's code)

and afterwards checks in the database that each proxied sale was recorded once. Skipped without
SVC_BASE_URL.
"""

from __future__ import annotations

import os
import unittest
from typing import Any, Dict

from svc_affiliate import Svc, SvcError

ENV = os.environ


@unittest.skipUnless(ENV.get("SVC_BASE_URL"), "SVC_BASE_URL not set: no service to test against")
class Live(unittest.TestCase):
    base_url: str
    run_id: str
    program_id: int
    partner_id: int
    affiliate_url: str
    svc: Svc
    admin: Svc
    session: Svc

    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url = ENV["SVC_BASE_URL"]
        cls.run_id = ENV["SVC_RUN"]
        cls.program_id = int(ENV["SVC_PROGRAM_ID"])
        cls.partner_id = int(ENV["SVC_PARTNER_ID"])
        cls.affiliate_url = ENV["SVC_AFFILIATE_URL"]
        cls.svc = Svc(cls.base_url, token=ENV["SVC_TRACKING_TOKEN"])
        cls.admin = Svc(cls.base_url, token=ENV["SVC_API_KEY"])
        cls.session = Svc(cls.base_url, token=ENV["SVC_SESSION"])

    def customer(self, name: str) -> str:
        """A click on the partner's link and a lead naming it: a customer the sale finds by customer_key."""
        click = self.svc.track.click(self.affiliate_url, page_url="https://shop.example/pricing")
        self.assertTrue(click["success"], click)
        key = f"py-{self.run_id}-{name}"
        lead = self.svc.track.lead(click_id=click["click_id"], customer_key=key, email=f"{key}@example.com")
        self.assertEqual(lead, {"success": True, "message": "Lead recorded"})
        return key

    def test_click_lead_sale_duplicate_and_refund(self) -> None:
        click = self.svc.track.click(self.affiliate_url, page_url="https://shop.example/pricing")
        self.assertTrue(click["success"])
        self.assertRegex(click["click_id"], r"^cust_\d+_\d+$")
        self.assertEqual(click["cookie_window_days"], 60)
        key = f"py-{self.run_id}-main"
        self.assertEqual(
            self.svc.track.lead(click_id=click["click_id"], customer_key=key, email="ada@example.com"),
            {"success": True, "message": "Lead recorded"},
        )
        txn = f"py-order-{self.run_id}-1"
        sale = self.svc.track.sale(transaction_id=txn, amount_cents=4900, customer_key=key)
        self.assertEqual(sale["success"], True)
        self.assertIsInstance(sale["sale_id"], int)
        self.assertIsInstance(sale["commission_id"], int)
        self.assertNotIn("duplicate", sale)

        again = self.svc.track.sale(transaction_id=txn, amount_cents=4900, customer_key=key)
        self.assertEqual(
            again,
            {
                "duplicate": True,
                "error": "Duplicate transaction_id. This sale has already been recorded.",
                "message": "Duplicate transaction_id. This sale has already been recorded.",
                "statusCode": 409,
            },
        )

        refund = self.svc.track.refund(transaction_id=txn, refund_reason="requested_by_customer")
        self.assertEqual(
            refund,
            {
                "success": True,
                "status": "reversed",
                "deductionAmount": 14.7,
                "commission_id": sale["commission_id"],
            },
        )
        again = self.svc.track.refund(transaction_id=txn)
        self.assertEqual((again["status"], again["commission_id"]), ("skipped", sale["commission_id"]))

        commissions = self.admin.commissions.list(self.program_id, status="reversed")["data"]
        mine = [c for c in commissions if c["id"] == sale["commission_id"]]
        self.assertEqual(len(mine), 1)
        self.assertEqual(
            (mine[0]["amount_cents"], mine[0]["partner_id"], mine[0]["refund_reason"]),
            (1470, self.partner_id, "requested_by_customer"),
        )

    def test_a_coupon_code_alone_attributes_a_new_customer(self) -> None:
        code = ENV["SVC_COUPON_CODE"]
        txn = f"py-order-{self.run_id}-code"
        key = f"py-{self.run_id}-coded"
        sale = self.svc.track.sale(
            transaction_id=txn, amount_cents=2000, customer_key=key, coupon_code=code.lower()
        )
        self.assertIsInstance(sale["commission_id"], int, sale)
        commissions = self.admin.commissions.list(self.program_id)["data"]
        mine = [c for c in commissions if c["id"] == sale["commission_id"]]
        self.assertEqual(
            [(c["partner_id"], c["coupon_code"]) for c in mine],
            [(self.partner_id, code)],
            "as the code spells it",
        )

    def test_one_idempotency_key_two_calls_get_one_answer(self) -> None:
        key = self.customer("replay")
        txn = f"py-order-{self.run_id}-replay"
        first = self.svc.track.sale(
            transaction_id=txn, amount_cents=1000, customer_key=key, idempotency_key=f"k-{txn}"
        )
        second = self.svc.track.sale(
            transaction_id=txn, amount_cents=1000, customer_key=key, idempotency_key=f"k-{txn}"
        )
        self.assertEqual(second, first)
        self.assertTrue(first["success"])
        with self.assertRaises(SvcError) as caught:
            self.svc.track.sale(
                transaction_id=txn, amount_cents=1001, customer_key=key, idempotency_key=f"k-{txn}"
            )
        self.assertEqual(
            (caught.exception.status, caught.exception.error, caught.exception.idempotency_key),
            (409, "Idempotency-Key was used with a different request", f"k-{txn}"),
        )

    def test_errors_raise_svc_error_with_the_spec_strings(self) -> None:
        with self.assertRaises(SvcError) as bad:
            self.svc.track.sale(transaction_id=f"py-order-{self.run_id}-bad", amount_cents=0)
        self.assertEqual(
            (bad.exception.status, bad.exception.body),
            (400, {"error": "amount_cents is required and must be a positive integer"}),
        )
        with self.assertRaises(SvcError) as unknown:
            self.svc.track.refund(transaction_id=f"py-order-{self.run_id}-none")
        self.assertEqual(
            (unknown.exception.status, unknown.exception.error), (404, "Sale not found for transaction_id")
        )
        with self.assertRaises(SvcError) as wrong:
            Svc(self.base_url, token="aff_not_a_token").track.refund(transaction_id="x")
        self.assertEqual((wrong.exception.status, wrong.exception.error), (401, "Invalid tracking token"))
        with self.assertRaises(SvcError) as lead:
            self.svc.track.lead()
        self.assertEqual(
            (lead.exception.status, lead.exception.error), (400, "click_id or customer_key is required")
        )

    def test_rewards(self) -> None:
        rewards = self.admin.rewards
        policy = {"type": "flat", "amount_cents": 700}
        group = rewards.create_group(self.program_id, name=f"Py {self.run_id}", commission=policy)["data"]
        self.assertEqual((group["is_default"], group["commission"]["amount_cents"]), (False, 700))
        default = next(g for g in rewards.groups(self.program_id)["data"] if g["is_default"])
        placed = rewards.place_partner(self.program_id, self.partner_id, group_id=group["id"])["data"]
        self.assertEqual(placed["group"]["id"], group["id"])
        rule = {
            "from_group_id": default["id"],
            "to_group_id": group["id"],
            "metric": "customers",
            "window": "lifetime",
            "threshold": 50,
        }
        self.assertEqual(rewards.set_tier_rules(self.program_id, [rule])["data"][0]["threshold"], 50)
        self.assertEqual(rewards.set_tier_rules(self.program_id, [])["data"], [])
        self.assertEqual(self.svc.track.discount(f"nobody-{self.run_id}"), {"data": None})
        rewards.place_partner(self.program_id, self.partner_id, group_id=default["id"])
        rewards.delete_group(self.program_id, group["id"])

    def test_management_and_dashboard_reads(self) -> None:
        program = self.admin.programs.get(self.program_id)["data"]
        self.assertEqual((program["id"], program["status"]), (self.program_id, "live"))
        self.assertTrue(any(p["id"] == self.program_id for p in self.admin.programs.list()["data"]))
        partners = self.admin.partners.list(self.program_id)["data"]
        self.assertTrue(any(p["id"] == self.partner_id and p["status"] == "approved" for p in partners))
        link = self.admin.links.create(self.program_id, self.partner_id, short_link=f"py-{self.run_id}-2")[
            "data"
        ]
        self.assertEqual(
            (link["short_link"], link["status"], link["clicks"]), (f"py-{self.run_id}-2", "active", 0)
        )
        updated = self.admin.links.update(self.program_id, self.partner_id, link["id"], status="inactive")
        self.assertEqual(updated["data"]["status"], "inactive")
        self.assertEqual(
            self.svc.track.click(f"https://shop.example/?aff=py-{self.run_id}-2"),
            {"success": False, "error": "Referral link is inactive"},
        )
        status: Dict[str, Any] = self.session.dashboard.status(self.program_id)["data"]
        self.assertEqual((status["programId"], status["hasPartners"]), (str(self.program_id), True))
        perf = self.session.dashboard.performance(self.program_id, period="30d")
        self.assertEqual(len(perf["data"]), 30)
        events = self.session.dashboard.events(self.program_id, eventType="click", pageSize=5)
        self.assertEqual(events["meta"]["pagination"]["pageSize"], 5)
        with self.assertRaises(SvcError) as caught:
            self.admin.dashboard.status(self.program_id)
        self.assertEqual(caught.exception.status, 401, "the dashboard reads need a session")

    def test_a_sale_answered_503_by_a_proxy_is_retried_and_recorded_once(self) -> None:
        key = self.customer("p503")
        flaky = Svc(ENV["SVC_PROXY_503_URL"], token=ENV["SVC_TRACKING_TOKEN"])
        sale = flaky.track.sale(transaction_id=ENV["SVC_TXN_503"], amount_cents=2500, customer_key=key)
        self.assertTrue(sale["success"], sale)
        self.assertIsInstance(sale["sale_id"], int)

    def test_a_sale_whose_connection_dropped_gets_the_recorded_answer_on_retry(self) -> None:
        key = self.customer("drop")
        flaky = Svc(ENV["SVC_PROXY_DROP_URL"], token=ENV["SVC_TRACKING_TOKEN"])
        sale = flaky.track.sale(transaction_id=ENV["SVC_TXN_DROP"], amount_cents=3100, customer_key=key)
        self.assertNotIn("duplicate", sale, "the retry is answered with the recorded sale, not a 409")
        self.assertTrue(sale["success"], sale)
        print(f"\nSALE_DROP_ID={sale['sale_id']}")


if __name__ == "__main__":
    unittest.main()
