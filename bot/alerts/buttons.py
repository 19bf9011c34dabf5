"""What an alert's buttons carry: the id of the alert message's group, nothing else.

The value is sealed for its action and channel (bot.payloads.seal_blocks) on the way out, so the
period of a snooze is the action's (one action per period) and the alert is the one the bot wrote;
what the clicker may do with it is decided again on the way in (handlers.alerts)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from bot.payloads import (
    ACTION_ALERT_ACKNOWLEDGE, ACTION_ALERT_SNOOZE_DAY, ACTION_ALERT_SNOOZE_HOUR, ACTION_ALERT_SNOOZE_RESOLVED,
    PayloadError,
)
from bot.render.wording import SNOOZE_DAY, SNOOZE_HOUR, SNOOZE_RESOLVED


@dataclass(frozen=True)
class Snooze:
    label: str
    period: timedelta | None  # None: until the alert resolves


SNOOZES = {  # labels: bot.render.wording, the one table of button words
    ACTION_ALERT_SNOOZE_HOUR: Snooze(SNOOZE_HOUR, timedelta(hours=1)),
    ACTION_ALERT_SNOOZE_DAY: Snooze(SNOOZE_DAY, timedelta(days=1)),
    ACTION_ALERT_SNOOZE_RESOLVED: Snooze(SNOOZE_RESOLVED, None),
}
ALERT_ACTIONS = (*SNOOZES, ACTION_ALERT_ACKNOWLEDGE)


def encode_alert(group_id: int) -> str:
    return json.dumps({"alert": int(group_id)}, separators=(",", ":"))


def decode_alert(value: str) -> int:
    try:
        raw = json.loads(value)
    except (TypeError, ValueError):
        raise PayloadError("this button's value is not valid") from None
    group_id = raw.get("alert") if isinstance(raw, dict) else None
    if not isinstance(group_id, int) or isinstance(group_id, bool) or not 0 < group_id < 2**31:
        raise PayloadError("this button's alert is not valid")
    return group_id
