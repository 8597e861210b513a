"""svc-affiliate: the Python client of svc, the self-hostable affiliate tracking service.

from svc_affiliate import Svc, SvcError, verify_webhook

svc = Svc("https://svc.example.com", token=os.environ["SVC_TRACKING_TOKEN"])
svc.track.sale(transaction_id="order_1001", amount_cents=4900, customer_key="user_42")
"""

from ._retry import RETRY_STATUSES, is_retryable, parse_retry_after, retry_delay
from .client import Svc
from .errors import SvcError, WebhookVerificationError
from .webhooks import verify_webhook

__version__ = "0.1.0"

__all__ = [
    "RETRY_STATUSES",
    "Svc",
    "SvcError",
    "WebhookVerificationError",
    "is_retryable",
    "parse_retry_after",
    "retry_delay",
    "verify_webhook",
]
