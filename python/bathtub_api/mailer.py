"""Alert email through a real SMTP server (aiosmtplib), from the durable outbox.

Usage ingest queues a mail in the same transaction that marks the alert rule as fired, so a
crossing is mailed exactly once; this loop then delivers: each pending mail is sent, or its
error is kept and it is tried again later (30 s, doubling, at most hourly). A dead or missing
mail server never fails an ingest: the mail waits in the outbox.
"""

from __future__ import annotations

import asyncio
import logging
from email.message import EmailMessage
from typing import Any
from urllib.parse import unquote, urlsplit

import aiosmtplib

from bathtub_api.ids import now

log = logging.getLogger("bathtub_api.mailer")
RETRY_FIRST_S = 30.0
RETRY_MAX_S = 3600.0


def alert_mail(fleet_name: str, fleet_id: str, fired: dict[str, Any], forecast: dict[str, Any]) -> dict[str, str]:
    """The email of one alert crossing."""
    rule = fired.get("name") or fired["kind"].replace("_", " ")
    subject = f"[bathtub] {fleet_name}: {rule} above {fired['threshold']:g}"
    expected = ", ".join(f"{x:.3g}" for x in forecast["expected_failures"][:6])
    body = (f"Fleet {fleet_name} ({fleet_id}): {fired['detail']} is {fired['value']:.4g}, above the alert threshold "
            f"{fired['threshold']:g}.\n\nExpected failures in the next periods ({forecast['period_label']}): "
            f"{expected}{' ...' if len(forecast['expected_failures']) > 6 else ''}.\nTotal over "
            f"{forecast['periods']} periods: {forecast['total_expected']:.4g}.\n\nYou get one email per crossing: the "
            "next one only after this figure has gone back to or below the threshold and risen again.\n")
    return {"recipient": fired["email"], "subject": subject, "body": body}


def _smtp_args(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps"):
        raise ValueError(f"BATHTUB_SMTP_URL must be smtp://... or smtps://... (got {parts.scheme!r})")
    args: dict[str, Any] = {"hostname": parts.hostname or "localhost",
                            "port": parts.port or (465 if parts.scheme == "smtps" else 25),
                            "use_tls": parts.scheme == "smtps", "timeout": 20}
    if parts.username:
        args["username"] = unquote(parts.username)
        args["password"] = unquote(parts.password or "")
    return args


async def deliver(store: Any, config: Any) -> int:
    """One pass over the due mails; returns how many were sent."""
    if not config.smtp_url:
        return 0
    args = _smtp_args(config.smtp_url)
    sent = 0
    for mail in await store.pending_mails(now()):
        msg = EmailMessage()
        msg["From"] = config.smtp_from
        msg["To"] = mail["recipient"]
        msg["Subject"] = mail["subject"]
        msg.set_content(mail["body"])
        try:
            await aiosmtplib.send(msg, **args)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as e:
            wait = min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** int(mail["attempts"]))
            await store.mail_done(mail["id"], sent_at=None, error=f"{type(e).__name__}: {e}", next_try=now() + wait)
            log.warning("alert mail %s not sent (attempt %d), retry in %.0f s: %s", mail["id"],
                        int(mail["attempts"]) + 1, wait, e)
            continue
        await store.mail_done(mail["id"], sent_at=now())
        sent += 1
    return sent


async def mailer_loop(store: Any, config: Any) -> None:
    while True:
        try:
            await deliver(store, config)
        except Exception:  # a bad configuration or store hiccup must not stop later deliveries
            log.exception("alert mail delivery failed")
        await asyncio.sleep(config.mail_poll_s)
