"""Chat and code-host tokens: Slack tokens and incoming webhooks, GitHub and GitLab tokens."""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import found
from playbooks.redaction.spans import Span, to_token_ends

_WEBHOOK = "https://hooks.slack.com/services/"
_GITHUB_GATES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GITLAB_GATES = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-", "glimt-", "glptt-",
                 "glagent-", "gloas-")
_OWN = (
    # Slack app-level (xapp-) and rotating refresh (xoxe-) tokens: the Slack plugin knows xox[abposr]-.
    # https://api.slack.com/authentication/token-types
    re2.compile(r"\bxapp-\d-[0-9A-Za-z-]{10,}"),
    re2.compile(r"\bxoxe(?:\.xox[bp])?-\d-[0-9A-Za-z-]{10,}"),
    # GitHub fine-grained personal access tokens (github_pat_…): the GitHub plugin knows gh[pousr]_.
    # https://github.blog/security/application-security/behind-githubs-new-authentication-token-formats/
    re2.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
)


def spans(line: str) -> Iterator[Span]:
    lowered = line.lower()
    if "xox" in lowered or "hooks.slack.com" in lowered:
        heads = []
        for start, end in found("slack", "SlackDetector", line):
            if line.startswith(_WEBHOOK, start):
                yield start + len(_WEBHOOK), end  # "a Slack webhook" still reads; its path is the secret
            else:
                heads.append((start, end))
        # The plugin's token regex stops at the first character outside [a-z0-9] of its last part.
        yield from to_token_ends(line, heads)
    if any(gate in line for gate in _GITHUB_GATES):
        yield from found("github_token", "GitHubTokenDetector", line, whole=True)
    if any(gate in line for gate in _GITLAB_GATES):
        yield from found("gitlab_token", "GitLabTokenDetector", line, whole=True)
    if "xapp-" in line or "xoxe" in line or "github_pat_" in line:
        for pattern in _OWN:
            for match in pattern.finditer(line):
                yield match.span()
