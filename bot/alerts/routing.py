"""Which channel an alert goes to, and whether that channel may read what it is about.

The candidates are the channels of the policy's ``alerts.routes`` that match the alert, in order, then
GPUBOT_ALERT_CHANNEL. The first candidate whose own grant opens every (cluster, namespace) the alert
speaks of gets it in full; when none does, the first candidate gets it masked (what it may not read is
held back and counted, the cluster's own objects it may read stay shown), so an alert about a team's
namespace never reaches people the policy keeps out of it, and is not lost either. No candidate: nowhere.

Whether a channel may read is the service's call (``DiagnosisService.channel_may_read``, the policy
checked in its one place), asked with the channel's grant alone: everyone in the channel reads the
message, whoever set up the route.

Routes are read from the policy in force at each decision, so an edited policy file routes the next
new alert without a restart. A message stays where it was first posted: moving it would lose its
thread and whatever people said under it; whether it is masked is decided again at each update.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable, Iterable

from bot.policy.model import Policy

log = logging.getLogger(__name__)
Scope = tuple[str, "str | None"]  # (cluster, namespace); namespace None: cluster-scoped
# (channel, cluster, namespace) -> whether the channel's own grant opens it.
ChannelReads = Callable[[str, str, "str | None"], bool]


def channel_opens(reads: ChannelReads, channel: str, scopes: Iterable[Scope]) -> bool:
    """Whether ``channel`` may read every scope, so an alert is shown there in full."""
    return all(reads(channel, cluster, namespace) for cluster, namespace in scopes)


def channel_closes(reads: ChannelReads, channel: str, scopes: Iterable[Scope]) -> frozenset[Scope]:
    """The scopes ``channel`` may not read, with each scope's cluster itself (its nodes and NodePools):
    a message holds back what is in them and shows the rest, so one closed namespace does not hide the
    NodePool it waits on."""
    scopes = tuple(dict.fromkeys(scopes))
    clusters = tuple(dict.fromkeys((cluster, None) for cluster, _ in scopes))
    return frozenset(s for s in dict.fromkeys(scopes + clusters) if not reads(channel, *s))


@dataclass(frozen=True)
class Destination:
    channel: str
    masked: bool  # the channel may not read everything the alert speaks of: what it may not is held back


class AlertRouter:
    def __init__(self, policy: Callable[[], Policy], *, default_channel: str | None,
                 reads: ChannelReads | None = None) -> None:
        """``policy``: the policy in force now (``PolicySource.current``); ``reads``: whether a
        channel's grant opens a namespace (``DiagnosisService.channel_may_read``; default: that
        channel's access in ``policy``, which is what the service asks too)."""
        self._policy = policy
        self.default_channel = default_channel
        self._reads = reads or self._policy_reads
        self._warned = False
        self._lock = threading.Lock()

    def _policy_reads(self, channel: str, cluster: str, namespace: str | None) -> bool:
        return self._policy().access(user=None, channel=channel).may_read(cluster, namespace)

    def opens(self, channel: str, scopes: Iterable[Scope]) -> bool:
        return channel_opens(self._reads, channel, scopes)

    def closes(self, channel: str, scopes: Iterable[Scope]) -> frozenset[Scope]:
        return channel_closes(self._reads, channel, scopes)

    def destination(self, *, cluster: str, scopes: Iterable[Scope], nodepool: str | None,
                    severity: str) -> Destination | None:
        """Where an alert with these traits is posted, masked or not; None: nowhere (logged once)."""
        scopes = tuple(scopes)
        namespace = next((ns for _, ns in scopes if ns), None)
        candidates = [r.channel for r in self._policy().alerts.routes
                      if r.matches(cluster=cluster, namespace=namespace, nodepool=nodepool, severity=severity)]
        if self.default_channel:
            candidates.append(self.default_channel)
        candidates = list(dict.fromkeys(candidates))
        for channel in candidates:
            if self.opens(channel, scopes):
                return Destination(channel, masked=False)
        if candidates:
            return Destination(candidates[0], masked=True)
        with self._lock:
            if not self._warned:
                self._warned = True
                log.warning("an alert matched no route of the policy's alerts: section and GPUBOT_ALERT_CHANNEL is "
                            "not set, so it is tracked but not posted; set GPUBOT_ALERT_CHANNEL to a channel id "
                            "(C0123ABCD) or add a route for it")
        return None
