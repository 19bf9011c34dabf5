"""Charts to Slack with the external upload flow: files.getUploadURLExternal, the bytes POSTed to the
URL it gives, files.completeUploadExternal into a channel or thread (or kept private to the bot, for an
App Home image). slack_sdk's ``files_upload_v2`` runs the three steps; the first and last pass the
client's pacer like every other call.

A chart is an extra: when it cannot be uploaded (the app lacks the files:write scope, the bot is not
in the channel, Slack's file service is down) the text answer has already gone, the reason is logged
with what to do, and the caller gets None.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

log = logging.getLogger(__name__)

# What the log says to do about an upload Slack refused, by Slack's error name.
_NEXT_STEP = {
    "missing_scope": "add the files:write bot scope to the Slack app (deploy/slack-app-manifest*.yaml) and reinstall it",
    "not_in_channel": "invite gpubot to the channel",
    "channel_not_found": "invite gpubot to the channel",
    "file_uploads_disabled": "a workspace admin has disabled file uploads; the text answer stands alone",
    "file_uploads_except_images_disabled": "a workspace admin allows only images; charts are PNG, so check the file name",
}
MAX_REMEMBERED = 256


@dataclass(frozen=True)
class Chart:
    png: bytes
    filename: str  # ends in .png: Block Kit's slack_file accepts png, jpg, jpeg and gif only
    title: str
    alt_text: str  # for screen readers (files.getUploadURLExternal alt_txt, at most 1000 characters)


def upload_chart(client: WebClient, chart: Chart, *, channel: str | None = None, thread_ts: str | None = None,
                 initial_comment: str | None = None) -> str | None:
    """Upload ``chart`` and share it in ``channel`` (in ``thread_ts`` when given; private to the bot
    without a channel). The file id, or None when it could not be uploaded (logged)."""
    try:
        done = client.files_upload_v2(content=chart.png, filename=chart.filename, title=chart.title,
                                      alt_txt=chart.alt_text[:1000], channel=channel, thread_ts=thread_ts,
                                      initial_comment=initial_comment)
    except SlackApiError as exc:
        error = str(exc.response.get("error") or "unknown_error")
        log.warning("chart %s not uploaded to %s: Slack answered %s; %s", chart.filename, channel or "the bot's files",
                    error, _NEXT_STEP.get(error, "the text answer was sent without it"))
        return None
    except (SlackClientError, OSError) as exc:  # the upload URL refused the bytes, or no connection
        log.warning("chart %s not uploaded to %s: %s; the text answer was sent without it", chart.filename,
                    channel or "the bot's files", exc)
        return None
    file = done.get("file") or {}
    return str(file["id"]) if file.get("id") else None


class PrivateCharts:
    """Charts uploaded once and shown by id (an image block's ``slack_file``): the same PNG bytes, which
    a deterministic chart gives for the same data, reuse the file already uploaded."""

    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self._ids: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def file_id(self, client: WebClient, chart: Chart) -> str | None:
        key = (str(client.base_url), hashlib.sha256(chart.png).hexdigest())
        with self._lock:
            known = self._ids.get(key)
            if known is not None:
                self._ids.move_to_end(key)
                return known
        uploaded = upload_chart(client, chart)
        if uploaded is not None:
            with self._lock:
                self._ids[key] = uploaded
                while len(self._ids) > self._limit:
                    self._ids.popitem(last=False)
        return uploaded


PRIVATE_CHARTS = PrivateCharts()
