"""Secrets known by the name they stand beside: ``KEY=value``, ``"key": "value"``, ``--key value``,
``Authorization: Bearer …``.

Two detectors look at every key. detect-secrets' KeywordDetector regexes (its word list: password,
secret, api_key, …; its forms: ``=``, ``:``, ``:=``, ``=>``, ``==``) run as published. Our own scanner
adds what they lack, each for a reason noted where it is defined: the words the plugin's list does not
hold (token, auth, credential, …), escaped JSON, values cut at the first blank (the plugin takes a
bare value to the end of the line, which would hide the rest of a log line), and the scan itself:
it consumes only ``KEY=`` and never the value, so a value cannot swallow an inner ``KEY=``
(``config: password=…``, ``env: AWS_SECRET_ACCESS_KEY=…``).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache

import re2

from playbooks.redaction.plugins import plugin_module, windows
from playbooks.redaction.spans import PLACEHOLDER_MAX, Span, harmless

# A key and its separator, never the value: the next match starts right after the separator, so a
# key inside a value is still seen. Quotes around the key may be escaped (``\"password\": \"…\"``).
_KEY = re2.compile(r"""(\\*["'])?([A-Za-z_][A-Za-z0-9_.-]{0,80})(?:\\*["'])?[ \t]*(:=|=>|=|:)[ \t]*""")
# ``--password VALUE``, ``-token VALUE`` in argv: no separator but a blank; no plugin covers it.
_FLAG = re2.compile(r"(?:^|\s)--?([A-Za-z][A-Za-z0-9_-]{1,60})[ \t]+")
# HTTP credentials: detect-secrets has no plugin for an Authorization header. A bare "Bearer x" counts
# only when x looks like a credential (long, not a word), so prose such as "basic authentication" stays.
_AUTH = re2.compile(r"(?i)\b((?:proxy-)?authorization[ \t]*[:=][ \t]*)?\b(bearer|basic|token|digest)[ \t]+([A-Za-z0-9._~+/=-]{8,})")
_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "aws4-hmac-sha256"})

# Words the plugin's DENYLIST does not hold (it has password, passwd, pwd, secret, api_key, auth_key,
# account_key, private_key, client_key, db_pass, …): bearer tokens, HTTP auth, cloud signatures.
_WORDS = frozenset({"token", "auth", "authorization", "credential", "credentials", "passphrase",
                    "sig", "signature", "apikey", "dockerconfigjson", "dockercfg", "cookie", "pat"})
# Joined words, found anywhere in a normalised key (x_api_key, aws_secret_access_key). api_key and
# private_key are in the plugin's list too; matched here they need no import of it.
_JOINED = ("access_key", "secret_key", "encryption_key", "signing_key", "master_key", "api_key", "session_token",
           "private_key", "sas_token", "shared_key")
# A key ending in one of these names a secret without holding one (secretName, tokenPath,
# password_file, SECRET_KEY_REF, auth_type): its value is evidence worth keeping.
_NOT_A_VALUE = frozenset({"name", "names", "ref", "refs", "file", "path", "dir", "id", "ids", "type", "length", "len",
                          "size", "count", "mount", "mode", "format", "enabled", "provider", "expiry", "expires",
                          "expiration", "ttl", "seconds", "version", "arn", "namespace", "kind", "source", "store",
                          "field", "env", "var", "template", "prefix", "ref_name", "url", "uri", "endpoint",
                          "limit", "limits", "header", "policy", "required", "mounted"})
# The shell's working directories, in every environment dump.
_SHELL = frozenset({"pwd", "oldpwd"})
# Cheap test before the word checks: none of these in a key, nothing to check.
_FRAGMENTS = ("pass", "pwd", "secret", "key", "token", "auth", "cred", "sig", "contras", "docker", "cookie", "pat")
# Every entry of the plugin's DENYLIST holds one of these: without one, neither the plugin's word list
# nor its regexes can match, and detect-secrets need not be imported for the line.
_PLUGIN_FRAGMENTS = ("key", "pass", "pwd", "secret", "contras")
_PLUGIN_NEVER = frozenset({"key", "pass"})  # its key/pass entries all need a word before them
# A line the plugin's regexes could match has one of its words before a separator; "key" and "pass"
# count only with a word before them (api_key, AccountKey, db_pass): the plugin has neither alone.
_PLUGIN_FORMS = re2.compile(r"""(?i)(?:\w_?(?:key|pass)|pass(?:word|wd)|pwd|secret|contras)"""
                            r"""(?:[^\s:=!(]{0,40}\s*(?:[:=!(]|\.assign)|\S{0,50}\s*['"`])"""
                            r"""|[!=]{2,3}\s*\w*(?:key|pass|pwd|secret|contras)""")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # on a key of at most 80 characters; cannot backtrack


@lru_cache(maxsize=4096)
def sensitive(key: str) -> bool:
    """Whether a key names a secret: the plugin's word list, or one of our words, says so; words, not
    substrings, for our own list: ``tokenizer_path`` and ``max_tokens`` are not secrets."""
    lowered = key.lower()
    if not any(fragment in lowered for fragment in _FRAGMENTS):
        return False
    norm = re.sub(r"[-. ]", "_", _CAMEL.sub("_", key).lower()).strip("_")
    words = [w for w in norm.split("_") if w]
    if not words or words[-1] in _NOT_A_VALUE:
        return False
    if any(w in _WORDS for w in words) or any(joined in norm for joined in _JOINED):
        return True
    if norm in _SHELL or norm in _PLUGIN_NEVER or not any(fragment in norm for fragment in _PLUGIN_FRAGMENTS):
        return False
    # "pwd" inside a longer word (cwd_pwd_hint, …) is not a password; as a word of the key it is.
    return any(found != "pwd" or "pwd" in words for found in _plugin_words().findall(norm))


@lru_cache(maxsize=1)
def _plugin_words() -> re.Pattern:
    """detect-secrets' own keyword list (``keyword.DENYLIST``) as one pattern over a normalised key."""
    return re.compile("|".join(plugin_module("keyword").DENYLIST))


def value_span(line: str, at: int, runs: _Runs | None = None) -> Span | None:
    """The value starting at ``at``: inside its quotes (plain, or escaped as in a JSON string inside a
    JSON string), or a bare value up to a blank or a delimiter. None for a nested object or list."""
    j = at
    while j < len(line) and line[j] == "\\":
        j += 1
    if j < len(line) and line[j] in "\"'`":
        delimiter, start = line[at:j + 1], j + 1
        return start, _closing(line, delimiter, start)
    if at >= len(line) or line[at] in "{[(":
        return None
    end = (runs or _Runs(line)).end(at)
    return (at, end) if end > at else None


class _Runs:
    """The stretches of a line a bare value may span, found in one pass: a line of thousands of keys
    (``password=password=…``) costs one scan, not one per key."""

    _RUN = re2.compile(r"""(?:[^ \t\r\n,;&'"<>)\]}`\\]|\\[^"'])+""")

    def __init__(self, line: str) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for match in self._RUN.finditer(line):
            self.starts.append(match.start())
            self.ends.append(match.end())

    def end(self, at: int) -> int:
        """Where the bare value starting at ``at`` ends (``at`` itself when none starts there)."""
        i = bisect_right(self.starts, at) - 1
        return self.ends[i] if i >= 0 and self.ends[i] > at else at


def _closing(line: str, delimiter: str, start: int) -> int:
    """Where a quoted value ends: the next unescaped plain quote, or the next escaped delimiter;
    the end of the line for a value cut short."""
    at = line.find(delimiter, start)
    while at > 0 and len(delimiter) == 1 and line[at - 1] == "\\":
        at = line.find(delimiter, at + 1)
    return at if at >= 0 else len(line)


def _worth_masking(line: str, span: Span | None) -> bool:
    if span is None:
        return False
    value = line[span[0]:min(span[1], span[0] + PLACEHOLDER_MAX + 1)]
    return not harmless(value) and value.lower() not in _SCHEMES


def spans(line: str) -> Iterator[Span]:
    lowered = line.lower()
    if not any(fragment in lowered for fragment in _FRAGMENTS):
        return
    runs = _Runs(line)
    if "=" in line or ":" in line:
        for match in _KEY.finditer(line):
            if sensitive(match.group(2)):
                span = value_span(line, match.end(), runs)
                if _worth_masking(line, span):
                    yield span
        if _PLUGIN_FORMS.search(line):
            yield from _plugin_spans(line, runs)
    if "-" in line:
        for match in _FLAG.finditer(line):
            if sensitive(match.group(1)) and line[match.end():match.end() + 1] != "-":
                span = value_span(line, match.end(), runs)
                if _worth_masking(line, span):
                    yield span
    if "bearer" in lowered or "basic" in lowered or "token" in lowered or "digest" in lowered:
        for match in _AUTH.finditer(line):
            header, credential = match.group(1), match.group(3)
            if header or (len(credential) >= 16 and not credential.isalpha() and match.group(2).lower() != "token"):
                yield match.span(3)


def _plugin_spans(line: str, runs: _Runs) -> Iterator[Span]:
    """The KeywordDetector's config-file and quoted forms, as published; a bare value is cut where our
    own scanner cuts it and a key that names rather than holds a secret is skipped, as above."""
    keyword = plugin_module("keyword")
    forms = {**keyword.CONFIG_DENYLIST_REGEX_TO_GROUP, **keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP}
    for offset, piece in windows(line):
        for regex, group in forms.items():
            for match in regex.finditer(piece):
                start, end = match.span(group)
                if start < 0 or not _names_a_value(piece, match.start()):
                    continue
                quoted = start > 0 and piece[start - 1] in "\"'`"
                span = (offset + start, offset + end) if quoted else value_span(line, offset + start, runs)
                if _worth_masking(line, span):
                    yield span


def _names_a_value(piece: str, at: int) -> bool:
    """Whether the key the plugin matched at ``at`` (extended to its whole name) holds a value."""
    start, end = at, at
    while start > 0 and (piece[start - 1].isalnum() or piece[start - 1] in "_.-"):
        start -= 1
    while end < len(piece) and (piece[end].isalnum() or piece[end] in "_.-"):
        end += 1
    words = [w for w in re.sub(r"[-. ]", "_", _CAMEL.sub("_", piece[start:end]).lower()).split("_") if w]
    return bool(words) and words[-1] not in _NOT_A_VALUE
