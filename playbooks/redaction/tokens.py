"""Bearer tokens recognisable by their own shape, wherever they stand: JWTs and vendor API keys."""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import found
from playbooks.redaction.spans import Span, to_token_ends

_OWN = (
    # OpenAI project/user keys (sk-proj-…, sk-…): the OpenAI plugin and gitleaks' openai-api-key both
    # want the ``T3BlbkFJ`` marker inside. https://platform.openai.com/docs/api-reference/authentication
    re2.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    # Hugging Face user access tokens (hf_…): no detect-secrets plugin, and gitleaks'
    # huggingface-access-token takes exactly 34 letters, no digits.
    # https://huggingface.co/docs/hub/security-tokens
    re2.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    # Anthropic keys (sk-ant-…) are caught by the sk- rule above; W&B keys have no shape of their own
    # (40 hex) and are caught by their name in the key/value family.
)

# (gate substring, plugin module, plugin class): each plugin runs only on lines holding its gate.
_PLUGINS = (
    ("eyJ", "jwt", "JwtTokenDetector"),
    ("k_live_", "stripe", "StripeDetector"),
    ("SG.", "sendgrid", "SendGridDetector"),
    ("pypi-", "pypi_token", "PypiTokenDetector"),
    ("_authToken", "npm", "NpmDetector"),
    ("T3BlbkFJ", "openai", "OpenAIDetector"),
)


def spans(line: str) -> Iterator[Span]:
    for gate, module, name in _PLUGINS:
        if gate in line:
            yield from to_token_ends(line, found(module, name, line))
    if "sk-" in line or "hf_" in line:
        for pattern in _OWN:
            for match in pattern.finditer(line):
                yield match.span()
