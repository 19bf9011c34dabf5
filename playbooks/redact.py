"""The one redaction step: secrets in gathered text never reach a finding, and so never Slack, the
terminal, JSON or the incident store.

Every Diagnosis leaves the engine (and the text explainer) through ``redact_diagnosis``. A secret's
value is replaced and the rest of the line is kept, so the evidence still reads:
``MLFLOW_TRACKING_URI=https://ci:[REDACTED]@mlflow.internal`` still says which server was meant.
"""
from __future__ import annotations

import re
from typing import Callable
from dataclasses import replace

from playbooks.model import Diagnosis, Evidence, Finding, Fix

MASK = "[REDACTED]"

# Tokens recognisable by their own shape, wherever they stand.
_SHAPED = (
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bxox[abposre]-[0-9A-Za-z-]{10,}"),  # Slack bot / user / app-level tokens
    re.compile(r"\bxapp-\d-[0-9A-Za-z-]{10,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWTs
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b"),  # OpenAI-style API keys
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_AUTH_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)?\b(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{8,})")
_URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]{1,20}://)([^/\s:@'\"]{1,200}):([^@\s/'\"]{1,300})@")
# NAME=value, NAME: value, "name": "value", name="value" (env dumps, JSON logs, YAML, argv)
_PAIR = re.compile(
    r"""(?P<name>["']?(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,80})["']?)(?P<sep>\s*[=:]\s*)"""
    r"""(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s,;{}&'"\[\]][^\s,;}&'"\]]*)"""
)
_SENSITIVE_PARTS = frozenset({"secret", "token", "password", "passwd", "pwd", "credential", "credentials",
                              "apikey", "passphrase", "auth"})
_SENSITIVE_JOINED = ("api_key", "apikey", "access_key", "accesskey", "secret_key", "private_key", "client_secret")
_NUMBER = re.compile(r"^[\"']?-?\d{1,12}(?:\.\d+)?[\"']?$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def redact(text: str) -> str:
    """``text`` with every secret value replaced by [REDACTED]."""
    if not text:
        return text
    out = _PRIVATE_KEY.sub(MASK, text)
    out = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{m.group(2)}:{MASK}@", out)
    out = _AUTH_HEADER.sub(_auth, out)
    out = _PAIR.sub(_pair, out)
    for pattern in _SHAPED:
        out = pattern.sub(MASK, out)
    return out


def _auth(match: re.Match) -> str:
    """An Authorization header's credentials always; a bare "Bearer x" only when x looks like one (long,
    with digits or symbols), so prose such as "basic authentication" stays as it is."""
    header, scheme, credential = match.group(1), match.group(2), match.group(3)
    if not header and (len(credential) < 16 or credential.isalpha() or scheme.lower() == "token"):
        return match.group(0)
    return f"{header or ''}{scheme} {MASK}"


def _pair(match: re.Match) -> str:
    value = match.group("value")
    if not _sensitive(match.group("key")) or MASK in value or _NUMBER.match(value) or value.lower() in _HARMLESS:
        return match.group(0)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{MASK}{quote}"


# Values that say nothing secret ("token: null", "password: <none>", "auth=true").
_HARMLESS = frozenset({"null", "none", "true", "false", '""', "''", "<none>", "[redacted]", "***", "-"})


def _sensitive(name: str) -> bool:
    """Whether a key names a secret: one of its words (snake, kebab, dotted or camelCase) says so.
    Words, not substrings: ``tokenizer_path`` and ``max_tokens`` are not secrets."""
    lowered = _CAMEL.sub("_", name).lower()
    if any(joined in lowered for joined in _SENSITIVE_JOINED):
        return True
    return any(part in _SENSITIVE_PARTS for part in re.split(r"[_.\-]", lowered))


def redact_diagnosis(diagnosis: Diagnosis) -> Diagnosis:
    """A copy of the diagnosis with every text field redacted."""
    return rewrite_texts(diagnosis, redact)


def rewrite_texts(diagnosis: Diagnosis, fn: Callable[[str], str]) -> Diagnosis:
    """A copy of the diagnosis with ``fn`` applied to every text people read (summary, gaps, titles,
    details, evidence, fix snippets)."""
    def finding(f: Finding) -> Finding:
        fix = f.fix
        return replace(
            f,
            title=fn(f.title),
            detail=fn(f.detail),
            evidence=[Evidence(source=fn(e.source), text=fn(e.text)) for e in f.evidence],
            fix=Fix(summary=fn(fix.summary), snippet=fn(fix.snippet), language=fix.language) if fix else None,
        )

    return replace(diagnosis, summary=fn(diagnosis.summary), findings=[finding(f) for f in diagnosis.findings],
                   gaps=[fn(g) for g in diagnosis.gaps])
