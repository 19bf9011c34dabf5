"""Errors people see, kept apart from bugs.

``UserError``: the input was wrong (bad name, unknown kind, unreadable log); the message says what to
type instead (exit 2). ``DependencyError``: something gpubot needs (the cluster, the database, Slack)
did not answer or refused; the message names it, what was tried and the setting to check (exit 3).
Anything else is a bug and surfaces loudly (exit 1).
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


class DependencyError(GpubotError):
    """A dependency is unreachable or unconfigured: the process cannot do its work until it is fixed."""

    exit_code = 3


class DatabaseUnreachable(DependencyError):
    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"cannot reach the database at {where} ({reason}): check GPUBOT_DATABASE_URL")
        self.where = where
        self.reason = reason


class SlackAuthFailed(DependencyError):
    """Slack answered and refused the token (auth.test): retrying will not help."""

    def __init__(self, error: str, *, variable: str = "SLACK_BOT_TOKEN") -> None:
        super().__init__(f"Slack refused the bot token ({error}): set {variable} to the app's Bot User OAuth "
                         f"Token (xoxb-...) from its OAuth & Permissions page")
        self.error = error


class SlackUnreachable(DependencyError):
    def __init__(self, url: str, reason: str, *, waited: float) -> None:
        super().__init__(f"cannot reach Slack at {url} ({reason}) after trying for {waited:.0f} s: check the "
                         f"network path to Slack (proxy, egress NetworkPolicy) or SLACK_API_URL")
        self.reason = reason


class ClusterError(DependencyError):
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
