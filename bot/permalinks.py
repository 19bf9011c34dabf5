"""Links from an incident to the Slack thread it was posted in, from chat.getPermalink.

The incident row holds the thread's channel and ts, not its URL (a URL names the workspace's domain,
which its admins can rename), so URLs are asked for and kept in memory: a message's permalink does not
change while the domain stays. A message Slack no longer has (``message_not_found``,
``channel_not_found``) is remembered as having none; any other failure is left to the next request.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Iterable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

if TYPE_CHECKING:
    from bot.store.incidents import IncidentView

log = logging.getLogger(__name__)
GONE = ("message_not_found", "channel_not_found")
MAX_REMEMBERED = 4096


class Permalinks:
    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self._urls: OrderedDict[tuple[str, str, str], str | None] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def for_incidents(self, client: WebClient, incidents: Iterable[IncidentView]) -> dict[int, str]:
        """Incident id -> its thread's URL, for the incidents posted to Slack whose message still exists."""
        links = {}
        for incident in incidents:
            if incident.slack_channel and incident.slack_ts:
                url = self.url(client, channel=incident.slack_channel, ts=incident.slack_ts)
                if url:
                    links[incident.id] = url
        return links

    def url(self, client: WebClient, *, channel: str, ts: str) -> str | None:
        key = (str(client.base_url), channel, ts)
        with self._lock:
            if key in self._urls:
                self._urls.move_to_end(key)
                return self._urls[key]
        try:
            url: str | None = str(client.chat_getPermalink(channel=channel, message_ts=ts)["permalink"])
        except SlackApiError as exc:
            error = exc.response.get("error")
            if error not in GONE:
                log.info("no link to %s/%s for now: %s", channel, ts, error)
                return None
            url = None
        except (SlackClientError, OSError) as exc:
            log.info("no link to %s/%s for now: %s", channel, ts, exc)
            return None
        with self._lock:
            self._urls[key] = url
            while len(self._urls) > self._limit:
                self._urls.popitem(last=False)
        return url


PERMALINKS = Permalinks()
