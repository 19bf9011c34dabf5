"""Button keys rotate: GPUBOT_BUTTON_KEYS newest first (the first seals, any opens), GPUBOT_BUTTON_KEY as
one key, and the key derived from the Slack secret kept through a rotation of that secret."""
from __future__ import annotations

import pytest

from bot.doctor import EXIT_CONFIGURATION, EXIT_OK
from bot.payloads import ACTION_RERUN, PayloadError, Signer, derived_key
from bot.settings import SettingsError, load_settings
from tests.conftest import run_cli

OLD, NEW, NEWER = "o" * 40, "n" * 40, "N" * 48
CHANNEL = "C0123ABCD"


def signer(env: dict) -> Signer:
    return Signer.from_settings(load_settings(env))


def seal(env: dict, value: str = "pod/ml/train-0") -> str:
    return signer(env).seal(value, action=ACTION_RERUN, conversation=CHANNEL)


def opened(env: dict, sealed: str) -> str:
    return signer(env).open(sealed, action=ACTION_RERUN, conversation=CHANNEL)


def test_a_button_sealed_with_the_old_key_opens_after_rotation():
    before = seal({"GPUBOT_BUTTON_KEY": OLD})
    assert opened({"GPUBOT_BUTTON_KEYS": f"{NEW},{OLD}"}, before) == "pod/ml/train-0"
    after = seal({"GPUBOT_BUTTON_KEYS": f"{NEW},{OLD}"})
    # The newest key seals: a replica that only knows NEW opens what was sealed after the rotation.
    assert opened({"GPUBOT_BUTTON_KEY": NEW}, after) == "pod/ml/train-0"
    with pytest.raises(PayloadError):
        opened({"GPUBOT_BUTTON_KEY": OLD}, after)


def test_a_button_sealed_with_a_removed_key_is_refused_with_the_usual_line():
    before = seal({"GPUBOT_BUTTON_KEYS": f"{NEW},{OLD}"})
    assert opened({"GPUBOT_BUTTON_KEYS": f"{NEWER},{NEW}"}, before)
    ancient = seal({"GPUBOT_BUTTON_KEY": OLD})
    with pytest.raises(PayloadError, match="^this button was not sent by gpubot$"):
        opened({"GPUBOT_BUTTON_KEYS": f"{NEWER},{NEW}"}, ancient)


def test_an_altered_button_is_refused_whatever_keys_are_listed():
    sealed = seal({"GPUBOT_BUTTON_KEYS": f"{NEW},{OLD}"})
    altered = sealed[:-2] + ("AA" if not sealed.endswith("AA") else "BB")
    with pytest.raises(PayloadError, match="not sent by gpubot"):
        opened({"GPUBOT_BUTTON_KEYS": f"{NEW},{OLD}"}, altered)


def test_the_derived_key_survives_a_rotation_of_the_signing_secret():
    old_secret = {"SLACK_SIGNING_SECRET": "old-signing-secret-0123456789abcdef"}
    before = seal(old_secret)  # no button key: derived from the signing secret, as before rotation
    kept = "hex:" + derived_key(load_settings(old_secret)).hex()
    rotated = {"SLACK_SIGNING_SECRET": "new-signing-secret-fedcba9876543210", "GPUBOT_BUTTON_KEYS": f"{NEW},{kept}"}
    assert opened(rotated, before) == "pod/ml/train-0"
    with pytest.raises(PayloadError, match="not sent by gpubot"):  # without the kept key, the old buttons die
        opened({"SLACK_SIGNING_SECRET": "new-signing-secret-fedcba9876543210"}, before)


def test_doctor_prints_the_derived_key(monkeypatch, capsys):
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "old-signing-secret-0123456789abcdef")
    result = run_cli("doctor", "--derived-button-key")
    expected = "hex:" + derived_key(load_settings({"SLACK_SIGNING_SECRET": "old-signing-secret-0123456789abcdef"})).hex()
    assert (result.code, result.out.strip()) == (EXIT_OK, expected)
    for name in ("SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    result = run_cli("doctor", "--derived-button-key")
    assert result.code == EXIT_CONFIGURATION and "no SLACK_SIGNING_SECRET" in result.err and not result.out


@pytest.mark.parametrize("raw, message", [
    (f"{NEW},short", "GPUBOT_BUTTON_KEYS: key 2 (newest first) must be at least 32 characters"),
    ("hex:zz" + "0" * 62, "GPUBOT_BUTTON_KEYS: key 1 starts with hex: but is not hexadecimal"),
    ("hex:" + "00" * 16, "GPUBOT_BUTTON_KEYS: key 1 is 16 bytes of hex; a key needs 32"),
])
def test_bad_keys_are_refused_naming_which(raw, message):
    with pytest.raises(SettingsError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        load_settings({"GPUBOT_BUTTON_KEYS": raw})


def test_the_first_listed_key_is_the_signing_key_setting():
    settings = load_settings({"GPUBOT_BUTTON_KEYS": f" {NEW} , {OLD} ,", "GPUBOT_BUTTON_KEY": NEWER})
    assert settings.button_keys == (NEW, OLD) and settings.button_key == NEW
    assert load_settings({"GPUBOT_BUTTON_KEY": OLD}).button_keys == (OLD,)
    assert load_settings({}).button_keys == ()
