"""Registry credentials: a base64 ``.dockerconfigjson`` / ``.dockercfg`` anywhere on a line.

A Secret of type kubernetes.io/dockerconfigjson holds base64 of ``{"auths": {registry: {"auth": …}}}``
(https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets). Beside its key the
key/value family masks it; alone (a describe dump, an event quoting it) no detect-secrets plugin
knows it: it is not a JWT (no dots) and base64 of plain JSON often scores under the entropy limit.
So a base64 token that decodes to JSON naming credentials is masked.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator

import re2

from playbooks.redaction.spans import Span

_BASE64_JSON = re2.compile(r"\b(?:eyJ|ewo|ewog|eyAi)[A-Za-z0-9+/_-]{16,}={0,2}")  # base64 of '{"', '{\n', '{ "'
_CREDENTIAL_KEYS = ("auth", "password", "token", "secret", "credential", "key")


def spans(line: str) -> Iterator[Span]:
    if "eyJ" not in line and "ewo" not in line and "eyAi" not in line:
        return
    for match in _BASE64_JSON.finditer(line):
        if "." in line[match.end():match.end() + 1]:
            continue  # a JWT's header: the token family decides
        if _names_credentials(match.group(0)):
            yield match.span()


def _names_credentials(token: str) -> bool:
    """Whether the token decodes to JSON text naming a credential. The JSON need not be whole: an
    evidence line may have been cut in the middle of the token."""
    whole = token.rstrip("=")[: len(token.rstrip("=")) // 4 * 4]
    try:
        decoded = base64.b64decode(whole.replace("-", "+").replace("_", "/"), validate=True).lower()
    except (binascii.Error, ValueError):
        return False
    return decoded.lstrip().startswith(b"{") and any(f'"{key}'.encode() in decoded for key in _CREDENTIAL_KEYS)
