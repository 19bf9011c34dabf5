"""The redaction families one by one: what each takes from detect-secrets, the limits chosen for the
high-entropy family (measured over the project's real logs), the gates that keep detect-secrets
unloaded for ordinary text, and long lines."""
from __future__ import annotations

import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from detect_secrets.plugins import keyword

from playbooks.redact import MASK, redact
from playbooks.redaction import entropy, keywords
from tests.playbooks.secret_forms import BASE64, mixed

ROOT = Path(__file__).resolve().parents[2]
# Logs, describe output, Alertmanager payloads and the simulator's cluster objects and logs.
LOGS = sorted([*ROOT.glob("tests/fixtures/text/*"), *ROOT.glob("tests/fixtures/alertmanager/*"),
               *ROOT.glob("sim/scenarios/**/*")])


def test_the_keyword_gate_lets_every_plugin_word_through():
    """The cheap tests before the plugin's word list: every DENYLIST entry holds a fragment, and no
    entry matches a bare "key" or "pass" (which the gate skips)."""
    for entry in keyword.DENYLIST:
        spelled = entry.replace("_?", "_")
        assert any(f in spelled for f in keywords._PLUGIN_FRAGMENTS), entry
        assert keywords._PLUGIN_FORMS.search(f"{spelled}: x"), entry
        for bare in keywords._PLUGIN_NEVER:
            assert not re.fullmatch(entry, bare)


@pytest.mark.parametrize("key,secret", [
    ("DB_PASSWORD", True), ("PGPASSWORD", True), ("db_pass", True), ("AccountKey", True), ("x-api-key", True),
    ("HF_TOKEN", True), ("hub_token", True), ("client_secret", True), ("sig", True), ("Authorization", True),
    ("tokenizer_path", False), ("max_tokens", False), ("secretName", False), ("passwordFile", False),
    ("PWD", False), ("topologyKey", False), ("key", False), ("secretKeyRef", False), ("auth_type", False),
])
def test_which_names_hold_a_secret(key, secret):
    assert keywords.sensitive(key) is secret


def test_the_entropy_limits_leave_every_real_log_line_alone():
    """The limits in playbooks/redaction/entropy.py, measured: over every log and describe output the
    project holds (tens of thousands of lines: NCCL, Karpenter, kubelet, torch, HF cache paths with
    commit hashes, GPU UUIDs), the high-entropy family masks nothing."""
    lines = [line for path in LOGS if path.is_file() for line in path.read_text(errors="replace").splitlines()]
    assert len(lines) > 10_000
    flagged = [line for line in lines if list(entropy.spans(line, []))]
    assert flagged == []


def test_random_keys_of_forty_characters_or_more_are_caught_by_entropy_alone():
    """With no name and no shape, only entropy speaks: as documented in entropy.py, nearly every random
    key of 48 characters and at least 95 in 100 of 40 are masked, whole."""
    def caught(n: int, draws: int) -> float:
        return sum(redact(f"cache entry {mixed(BASE64, n)} restored") == f"cache entry {MASK} restored"
                   for _ in range(draws)) / draws

    assert caught(48, 500) >= 0.99
    assert caught(40, 500) >= 0.95


def test_the_distinct_character_bound_agrees_with_the_plugin():
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    plugin = Base64HighEntropyString(limit=entropy.BASE64_LIMIT)
    below = "".join(BASE64[i % (entropy._DISTINCT_FOR_LIMIT - 1)] for i in range(200))
    assert plugin.calculate_shannon_entropy(below) <= entropy.BASE64_LIMIT


def test_ordinary_text_never_loads_detect_secrets():
    """detect-secrets costs a tenth of a second to import (it loads ``requests``): text with nothing
    secret-looking, the usual case for ``gpubot explain``, never pays it."""
    code = ("import sys; from playbooks.redact import redact; "
            "redact('NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\\n  - key: nvidia.com/gpu\\n"
            "NVIDIA device plugin marked GPU GPU-566e6f65-c38e-b12f-4824-6944218668b9 unhealthy after Xid 79'); "
            "print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("at", [100, 5_000, 40_000])
def test_a_secret_deep_in_a_long_line_is_found(at):
    """The plugins see a long line in overlapping windows; a secret at any offset is still masked."""
    filler = "".join(secrets.choice("abcdefgh ") for _ in range(60_000))
    key_id = "AKIA" + "".join(secrets.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    password = mixed(BASE64, 20)
    line = filler[:at] + f" aws_access_key_id={key_id} db_password := \"{password}\" " + filler[at:]
    out = redact(line)
    assert key_id not in out and password not in out
