"""The policy in force: read at start-up, read again when the file changes, without a restart.

A Kubernetes ConfigMap volume updates a file by swapping the ``..data`` symlink to a new directory,
so the file is stat'ed through its symlinks and a change of inode counts as much as a change of
modification time or size. An edit that breaks the file never takes the bot's policy away: the
policy read last stays in force, and the error is logged and kept in ``last_error`` until the file
is fixed.
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from typing import Callable

from bot.policy.load import PolicyError, decode_policy, parse_policy, read_policy_bytes
from bot.policy.model import ANY, Policy

log = logging.getLogger("gpubot.policy")

_Stamp = tuple[int, int, int]


class PolicySource:
    """Holds the current :class:`Policy`; safe to share between the threads that serve Slack."""

    def __init__(self, path: str | os.PathLike[str] | None, *, check_interval: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = None if path is None else str(path)
        self.check_interval = check_interval
        self.last_error: str | None = None
        self._clock = clock
        self._lock = threading.Lock()
        self._stamp: _Stamp | None = None
        self._digest: str | None = None
        # What was wrong with the content of digest ``_digest`` (None: it is the policy in force).
        self._content_error: str | None = None
        if self.path is None:
            self._policy = Policy.open()
        else:
            # Start-up stops here on an invalid file: PolicyError carries the line and the reason.
            # Stat'ed before the read: a change in between shows at the next check (and its content is
            # found equal to what was read).
            try:
                self._stamp = _stat(self.path)
            except OSError:
                pass  # read_policy_bytes says what is wrong with the path
            data = read_policy_bytes(self.path)
            self._digest = hashlib.sha256(data).hexdigest()
            self._policy = parse_policy(decode_policy(data, source=self.path), source=self.path)
        self._checked_at = clock()

    @classmethod
    def from_settings(cls, settings) -> "PolicySource":
        return cls(settings.policy_path)

    def current(self) -> Policy:
        if self.path is None:
            return self._policy
        now = self._clock()
        with self._lock:
            if now - self._checked_at >= self.check_interval:
                self._checked_at = now
                self._refresh(self.path)
            return self._policy

    def describe(self) -> str:
        """One line for the start-up log: what the policy in force opens, or that there is none."""
        text = describe(self.current())
        return text if self.last_error is None else f"{text} (last change not applied: {self.last_error})"

    def _refresh(self, path: str) -> None:
        try:
            stamp = _stat(path)
        except OSError as exc:
            self._stamp = None
            self._fail(f"{path}: cannot read the policy file ({exc.strerror}); keeping the policy read before")
            return
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            data = read_policy_bytes(path)
        except PolicyError as exc:
            self._stamp = None  # read again on the next check
            self._fail(f"{exc}; keeping the policy read before")
            return
        digest = hashlib.sha256(data).hexdigest()
        if digest == self._digest:
            # Touched, or the same content under a new symlink target, or back after a failed read.
            if self.last_error != self._content_error:
                self.last_error = self._content_error
                if self.last_error is None:
                    log.info("policy file readable again, unchanged: %s", describe(self._policy))
            return
        # The digest of what was seen, good or bad: a broken file is reported once, not every check.
        self._digest = digest
        try:
            policy = parse_policy(decode_policy(data, source=path), source=path)
        except PolicyError as exc:
            self._content_error = f"{exc}; keeping the policy read before"
            self._fail(self._content_error)
            return
        self._policy = policy
        self._content_error = None
        self.last_error = None
        log.info("policy reloaded: %s", describe(policy))

    def _fail(self, message: str) -> None:
        if message != self.last_error:  # once per problem, not at every check while it lasts
            log.error("policy not reloaded: %s", message)
        self.last_error = message


def _stat(path: str) -> _Stamp:
    st = os.stat(path)  # follows symlinks, so a ConfigMap's ..data swap shows as a new inode
    return st.st_mtime_ns, st.st_size, st.st_ino


def describe(policy: Policy) -> str:
    """What ``policy`` opens, in one line (``gpubot policy check`` and the start-up log)."""
    if not policy.enforced:
        return ("no policy file (GPUBOT_POLICY unset): every channel may read every namespace of every cluster; "
                "remediations are disabled")
    named = [c for c in policy.channels if c != ANY]
    others = "a \"*\" grant for every other channel" if ANY in policy.channels else "every other channel denied"
    approvers = sum(len(names) for names in (policy.approvers.users, policy.approvers.usergroups,
                                            policy.approvers.kubernetes_users, policy.approvers.kubernetes_groups))
    kinds = ", ".join(policy.remediations.scopes) or "none"
    return (f"policy {policy.source}: {_count(len(named), 'channel')}, {others}, "
            f"{_count(len(policy.users), 'user grant')}, {_count(approvers, 'approver')}, remediations: {kinds}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
