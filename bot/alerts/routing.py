"""Which channel an alert goes to: the policy's ``alerts.routes`` (first match wins), else
GPUBOT_ALERT_CHANNEL, else nowhere.

Routes are read from the policy in force at each decision, so an edited policy file routes the next
new alert without a restart. A message stays where it was first posted: moving it would lose its
thread and whatever people said under it.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from bot.policy.model import Policy

log = logging.getLogger(__name__)


class AlertRouter:
    def __init__(self, policy: Callable[[], Policy], *, default_channel: str | None) -> None:
        """``policy``: the policy in force now (``PolicySource.current``)."""
        self._policy = policy
        self.default_channel = default_channel
        self._warned = False
        self._lock = threading.Lock()

    def channel(self, *, cluster: str, namespace: str | None, nodepool: str | None, severity: str) -> str | None:
        """Where an alert with these traits is posted; None: nowhere (logged once per process)."""
        routed = self._policy().alerts.channel(cluster=cluster, namespace=namespace, nodepool=nodepool,
                                               severity=severity)
        if routed or self.default_channel:
            return routed or self.default_channel
        with self._lock:
            if not self._warned:
                self._warned = True
                log.warning("an alert matched no route of the policy's alerts: section and GPUBOT_ALERT_CHANNEL is "
                            "not set, so it is tracked but not posted; set GPUBOT_ALERT_CHANNEL to a channel id "
                            "(C0123ABCD) or add a route for it")
        return None
