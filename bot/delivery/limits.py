"""Slack's published Web API limits for the methods gpubot calls.

Source: docs.slack.dev/apis/web-api/rate-limits ("per API method per workspace per app"; Tier 1: 1+ per
minute, Tier 2: 20+, Tier 3: 50+, Tier 4: 100+; chat.postMessage: about one message per second per
channel plus a workspace-wide limit) and each method's reference page for its tier. We pace to the
floor of each tier ("50+" is paced as 50), so a bot that keeps to this table is never told 429 by
Slack for going too fast; Slack still may (other apps' traffic does not count, but incidents do), and
a 429's Retry-After then holds the method back for everyone in the process.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

TIER_PER_MINUTE = {1: 1, 2: 20, 3: 50, 4: 100}
# Slack counts calls when they arrive, we when they leave: a call that left as the window turned may
# arrive a little early by Slack's clock. Our windows are this much longer than Slack's.
NETWORK_MARGIN_S = 0.5
MINUTE = 60.0 + NETWORK_MARGIN_S


@dataclass(frozen=True)
class MethodLimit:
    per_window: int
    window_s: float = MINUTE


def _tier(n: int) -> MethodLimit:
    return MethodLimit(TIER_PER_MINUTE[n])


# Methods gpubot calls. A method not listed is not paced (its 429s are still honoured).
METHOD_LIMITS: dict[str, MethodLimit] = {
    "chat.update": _tier(3),
    "chat.delete": _tier(3),
    "chat.postEphemeral": _tier(4),
    "views.open": _tier(4),
    "views.update": _tier(4),
    "views.publish": _tier(4),
    "conversations.info": _tier(3),
    "users.info": _tier(4),
    "usergroups.users.list": _tier(2),
    # A chart: files.getUploadURLExternal, the bytes POSTed to the URL it gave (Slack's file service, not
    # a Web API method: not counted), files.completeUploadExternal. Both methods' pages say Tier 4.
    "files.getUploadURLExternal": _tier(4),
    "files.completeUploadExternal": _tier(4),
    # "Special rate limits apply" (its page) with no figure published: paced as Tier 4, the most any
    # published tier promises. Links are remembered (bot/permalinks.py), so few calls are made.
    "chat.getPermalink": _tier(4),
    # chat.postMessage is "special": per channel (below) and "several hundred per minute" per workspace.
    "chat.postMessage": MethodLimit(300),
}

# chat.postMessage: one message per second per channel (bursts "may" pass; we do not count on it).
CHANNEL_LIMITS: dict[str, MethodLimit] = {"chat.postMessage": MethodLimit(1, 1.0 + NETWORK_MARGIN_S / 5)}
# Channels are paced in this many shared windows (bot/delivery/pacer.py); channels that hash alike share one.
CHANNEL_BUCKETS = 256


def channel_key(method: str, channel: str) -> str:
    """The window a channel's calls of ``method`` are paced in."""
    return f"{method}@{zlib.crc32(channel.encode()) % CHANNEL_BUCKETS}"


def scaled(limit: MethodLimit, share: float) -> MethodLimit:
    """This process's part of a limit shared by ``1/share`` replicas (at least one call per window)."""
    return MethodLimit(max(1, int(limit.per_window * share)), limit.window_s)
