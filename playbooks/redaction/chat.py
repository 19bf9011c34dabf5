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
# Slack app-level tokens (xapp-) and GitHub fine-grained tokens (github_pat_) are gitleaks' rules
# slack-app-token and github-fine-grained-pat (playbooks/redaction/gitleaks.py).
_OWN = (
    # Slack rotating tokens (xoxe-, xoxe.xoxp-): the Slack plugin knows xox[abposr]-, and gitleaks'
    # slack-config-* rules want the exact upper-case lengths of a configuration token only.
    # https://api.slack.com/authentication/token-types
    re2.compile(r"\bxoxe(?:\.xox[bp])?-\d-[0-9A-Za-z-]{10,}"),
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
    if "xoxe" in line:
        for pattern in _OWN:
            for match in pattern.finditer(line):
                yield match.span()
