"""Cloud provider credentials: AWS access keys, Azure storage keys and SAS signatures, GCP API keys."""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import found
from playbooks.redaction.spans import Span

_AWS_GATES = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")
# The plugin's second regex wants a quoted 40-character secret key near "aws": without one, skip it.
_QUOTED_40 = re2.compile(r"""['"][0-9a-zA-Z/+]{40}['"]""")
_AZURE_KEY = "AccountKey="
# An Azure SAS token's signature (``…&sig=…``) grants what the token grants; detect-secrets has no
# plugin for it. https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview
_SAS_SIGNATURE = re2.compile(r"(?i)(?:^|[?&;\s\"'])sig=([A-Za-z0-9%+/=_-]{8,})")
# Google API keys (AIza…, 39 characters): no detect-secrets plugin, and gitleaks' gcp-api-key wants a
# quote, a blank or ";" after the key, so "?key=AIza…&callback=…" in a URL slips past it.
# https://cloud.google.com/docs/authentication/api-keys
_GCP_API_KEY = re2.compile(r"\bAIza[0-9A-Za-z_-]{35}")


def spans(line: str) -> Iterator[Span]:
    if any(gate in line for gate in _AWS_GATES) or ("aws" in line.lower() and _QUOTED_40.search(line)):
        yield from found("aws", "AWSKeyDetector", line)
    if _AZURE_KEY in line:
        for start, end in found("azure_storage_key", "AzureStorageKeyDetector", line):
            yield start + len(_AZURE_KEY), end  # the plugin reports "AccountKey=<key>": keep the name
    if "sig=" in line.lower():
        for match in _SAS_SIGNATURE.finditer(line):
            yield match.span(1)
    if "AIza" in line:
        for match in _GCP_API_KEY.finditer(line):
            yield match.span()
