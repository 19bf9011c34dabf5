"""Errors people see, kept apart from bugs.

``UserError``: the input was wrong (bad name, unknown kind, unreadable log); the message says what to
type instead. ``ClusterError``: the cluster or an API did not answer; the message names the cluster
and what was tried. Anything else is a bug and surfaces loudly.
"""
from __future__ import annotations


class GpubotError(Exception):
    exit_code = 1


class UserError(GpubotError):
    exit_code = 2


class NotFoundError(UserError):
    """A named object does not exist; ``suggestions`` are close names that do."""

    def __init__(self, message: str, *, suggestions: list[str] | None = None) -> None:
        self.suggestions = list(suggestions or [])
        if self.suggestions:
            message = f"{message} Did you mean: {', '.join(self.suggestions)}?"
        super().__init__(message)


class ClusterError(GpubotError):
    exit_code = 3


class ClusterUnreachable(ClusterError):
    def __init__(self, cluster: str, reason: str) -> None:
        super().__init__(f"cannot reach cluster {cluster} ({reason})")
        self.cluster = cluster
        self.reason = reason


class ClusterConfigError(ClusterError):
    """No usable kubeconfig / context: say how to point gpubot at a cluster."""


class Refused(UserError):
    """The policy does not open this to the asker here; the message names what was asked, never whether
    it exists."""
