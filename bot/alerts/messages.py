"""One alert message, rendered, sealed and sent; and what it shows, as a key, so a message is updated
only when something a reader would see has changed (count, severity, title, state, snooze, who
acknowledged), never because a sweep merely saw the same problems again."""
from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.payloads import Signer, seal_blocks
from bot.render.blocks.alert import alert_blocks, alert_text, closed_to, headline
from bot.render.blocks.alert_masking import Closed
from bot.store.alerts import GroupView

log = logging.getLogger(__name__)
# What failing to reach Slack looks like once the client's own retries (bot/slack_client.py) are spent.
SLACK_FAILURES = (SlackApiError, OSError)


def _key(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


def shown_key(group: GroupView, now: datetime, *, masked: bool = False, closed: Closed | None = None) -> str:
    """``closed``: what the channel may not read, scope by scope; ``masked`` alone: none of it."""
    snooze = (group.snoozed_until_resolved, group.snoozed_until, group.snoozed_by) if group.snoozed(now) else None
    hidden = closed_to(group, masked=masked, closed=closed).key()
    return _key(["alert", hidden, group.status, group.count, group.severity, headline(group), group.acknowledged_by,
                 snooze, [(m.fingerprint, m.count, m.severity, m.title) for m in group.members[:10]]])


def digest_key(group: GroupView) -> str:
    # A digest shows counts per code and severity, and the titles of the most severe.
    return _key(["digest", group.status, group.count, group.severity, group.code, group.title])


def post(client: WebClient, signer: Signer, group: GroupView, *, channel: str, now: datetime,
         masked: bool = False, closed: Closed | None = None) -> str:
    """Post the group's message in ``channel`` (``closed``: the scopes it may not read, held back and
    counted; ``masked`` alone: codes and counts only); its ts. Raises what Slack or the network raised."""
    result = client.chat_postMessage(channel=channel, text=alert_text(group, masked=masked, closed=closed),
                                     blocks=seal_blocks(alert_blocks(group, now=now, masked=masked, closed=closed),
                                                        signer, conversation=channel))
    return result["ts"]


def update(client: WebClient, signer: Signer, group: GroupView, *, now: datetime, masked: bool = False,
           closed: Closed | None = None) -> bool:
    """Show the group as it is now in its message; False (logged) when Slack could not be told."""
    assert group.channel is not None and group.ts is not None
    try:
        client.chat_update(channel=group.channel, ts=group.ts, text=alert_text(group, masked=masked, closed=closed),
                           blocks=seal_blocks(alert_blocks(group, now=now, masked=masked, closed=closed), signer,
                                              conversation=group.channel))
    except SLACK_FAILURES as exc:
        log.warning("alert #%s in %s (message %s) not updated, next report tries again: %s", group.id,
                    group.channel, group.ts, why(exc))
        return False
    return True


def why(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return f"{type(exc).__name__}: {exc}"
