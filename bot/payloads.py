"""What a button carries: small, typed, signed by the bot, validated on the way back in.

Slack signs the request a click arrives in, but the button's ``value`` (at most 2000 characters) is
only as trustworthy as whoever wrote the message, and a click may be forged or replayed like any
request. So every value the bot sends is sealed (:class:`Signer`: HMAC-SHA256 over the value, the
conversation it was posted in and when), and a click is acted on only after the seal is checked and
the value decoded through the same validation as typed input. What it names is then authorised again
for the person who clicked (``bot.service``).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from dataclasses import dataclass
from typing import Callable

from bot.errors import UserError
from bot.targets import KINDS, validate_context, validate_name, validate_namespace
from playbooks.model import Diagnosis, Remediation
from playbooks.remediations import InvalidRemediation, parse

ACTION_RERUN = "gpubot.rerun"
ACTION_EVIDENCE = "gpubot.show_evidence"
ACTION_APPROVAL = "gpubot.request_approval"
ACTION_ACKNOWLEDGE = "gpubot.incident_acknowledge"
ACTION_RESOLVE = "gpubot.incident_resolve"
ACTION_SHARE = "gpubot.share_explanation"
ACTION_APPROVE = "gpubot.proposal_approve"
ACTION_REJECT = "gpubot.proposal_reject"
ACTION_UNDO = "gpubot.proposal_undo"
# Modal private_metadata is sealed like a button value, under these names.
META_EXPLAIN = "gpubot.modal.explain"
META_RESOLVE = "gpubot.modal.resolve"
MAX_VALUE = 2000


class PayloadError(UserError):
    pass


SEAL_PREFIX = "g1."
_KEY_LABEL = b"gpubot button values v1"
HEX_KEY = "hex:"  # a key given as raw bytes: how the derived key is written into GPUBOT_BUTTON_KEYS


def key_bytes(text: str) -> bytes:
    """A key from GPUBOT_BUTTON_KEY(S): ``hex:<bytes as hex>`` (a derived key), else the text's UTF-8."""
    return bytes.fromhex(text[len(HEX_KEY):]) if text.startswith(HEX_KEY) else text.encode("utf-8")


def derived_key(settings) -> bytes | None:
    """The key derived from the Slack app's secret (signing secret, else app token, else bot token)."""
    secret = settings.slack_signing_secret or settings.slack_app_token or settings.slack_bot_token
    return hmac.new(secret.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest() if secret else None


class Signer:
    """Seals values the bot sends in buttons and modal metadata; opens them when they come back.

    A sealed value is ``g1.<payload>.<mac>``: the payload (base64url JSON of the value, the action it
    belongs to, the conversation it was posted in, when) and its HMAC-SHA256 under the bot's key.
    A value from another action, another conversation, past its time-to-live or altered in any byte is
    refused before it is parsed.
    """

    def __init__(self, key: bytes, *, ttl: float, clock: Callable[[], float] = time.time,
                 older: tuple[bytes, ...] = ()) -> None:
        """``key`` signs; ``older`` keys (a rotation's previous ones) still verify what they signed."""
        if any(len(k) < 32 for k in (key, *older)):
            raise ValueError("a button signing key needs at least 32 bytes")
        self._key = key
        self._keys = (key, *older)
        self.ttl = ttl
        self._clock = clock

    @classmethod
    def from_settings(cls, settings) -> "Signer":
        """GPUBOT_BUTTON_KEYS (newest signs, all verify) or GPUBOT_BUTTON_KEY, else a key derived from the
        Slack app's own secret, so every replica of one app agrees without another secret to distribute;
        else (no secret at all) one per process."""
        keys = tuple(getattr(settings, "button_keys", ()) or ()) or ((settings.button_key,) if settings.button_key else ())
        if keys:
            newest, *older = (key_bytes(k) for k in keys)
            return cls(newest, ttl=settings.button_ttl, older=tuple(older))
        key = derived_key(settings)
        return cls(key if key is not None else os.urandom(32), ttl=settings.button_ttl)

    def _mac(self, payload: str, key: bytes | None = None) -> str:
        digest = hmac.new(key or self._key, payload.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def _verifies(self, payload: str, mac: str) -> bool:
        given = mac.encode("ascii", "replace")
        # Every key is tried (no early exit), so the time taken does not say which key matched.
        matched = [hmac.compare_digest(given, self._mac(payload, key).encode("ascii")) for key in self._keys]
        return any(matched)

    def seal(self, value: str, *, action: str, conversation: str | None) -> str:
        """``conversation``: the channel the value is posted in (None: a user's DM or App Home, checked
        by the authorisation of the click alone)."""
        body = json.dumps({"v": value, "a": action, "c": conversation, "t": int(self._clock())},
                          separators=(",", ":"), sort_keys=True)
        payload = base64.urlsafe_b64encode(body.encode("utf-8")).rstrip(b"=").decode("ascii")
        sealed = f"{SEAL_PREFIX}{payload}.{self._mac(payload)}"
        if len(sealed) > MAX_VALUE:
            raise ValueError(f"sealed value of {len(sealed)} characters exceeds Slack's {MAX_VALUE}")
        return sealed

    def open(self, sealed: object, *, action: str, conversation: str | None) -> str:
        """The value sealed for ``action``; PayloadError (one line, nothing revealed) otherwise."""
        if not isinstance(sealed, str) or len(sealed) > MAX_VALUE or not sealed.startswith(SEAL_PREFIX):
            raise PayloadError("this button was not sent by gpubot")
        payload, _, mac = sealed[len(SEAL_PREFIX):].partition(".")
        if not payload or not self._verifies(payload, mac):
            raise PayloadError("this button was not sent by gpubot")
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            raise PayloadError("this button was not sent by gpubot") from None
        if body.get("a") != action or not isinstance(body.get("v"), str) or not isinstance(body.get("t"), int):
            raise PayloadError("this button was not sent by gpubot")
        if body.get("c") is not None and body["c"] != conversation:
            raise PayloadError("this button belongs to another conversation: use it where it was posted")
        if self._clock() - body["t"] > self.ttl:
            raise PayloadError("this button has expired: run the command again for a fresh answer")
        return body["v"]


@dataclass(frozen=True)
class TargetRef:
    kind: str
    name: str
    namespace: str | None = None
    cluster: str | None = None

    @classmethod
    def of(cls, diagnosis: Diagnosis) -> "TargetRef":
        t = diagnosis.target
        return cls(kind=t.kind, name=t.name, namespace=t.namespace, cluster=diagnosis.cluster)

    @property
    def text(self) -> str:
        return f"{self.kind}/{self.name}"

    def to_dict(self) -> dict:
        return {"k": self.kind, "n": self.name, "ns": self.namespace, "c": self.cluster}

    @classmethod
    def from_dict(cls, raw: object) -> "TargetRef":
        if not isinstance(raw, dict) or raw.get("k") not in KINDS:
            raise PayloadError("this button's target is not valid")
        try:
            name = validate_name(str(raw.get("n", "")))
            ns = validate_namespace(str(raw["ns"])) if raw.get("ns") is not None else None
            cluster = validate_context(str(raw["c"])) if raw.get("c") is not None else None
        except UserError as exc:
            raise PayloadError(f"this button's target is not valid: {exc}") from None
        return cls(kind=raw["k"], name=name, namespace=ns, cluster=cluster)


def map_buttons(blocks: list[dict], fn: Callable[[dict], str | None]) -> list[dict]:
    """A copy of ``blocks`` where each button's value is replaced by ``fn(button)`` (None: kept)."""
    def walk(node):
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        if out.get("type") == "button" and "value" in out:
            value = fn(out)
            if value is not None:
                out["value"] = value
        return out

    return walk(blocks)


def seal_blocks(blocks: list[dict] | None, signer: Signer, *, conversation: str | None) -> list[dict] | None:
    """A copy of ``blocks`` with every gpubot button's value sealed for the conversation it is sent to:
    the one place values leave, so none leaves unsigned."""
    if blocks is None:
        return None

    def seal(button: dict) -> str | None:
        action, value = button.get("action_id"), str(button["value"])
        if not isinstance(action, str) or not action.startswith("gpubot.") or value.startswith(SEAL_PREFIX):
            return None
        return signer.seal(value, action=action, conversation=conversation)

    return map_buttons(blocks, seal)


def _dump(obj: dict) -> str:
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True)
    if len(text) > MAX_VALUE:
        raise ValueError(f"button value of {len(text)} characters exceeds Slack's {MAX_VALUE}")
    return text


def _load(value: str) -> dict:
    if not isinstance(value, str) or len(value) > MAX_VALUE:
        raise PayloadError("this button's value is not valid")
    try:
        raw = json.loads(value)
    except ValueError:
        raise PayloadError("this button's value is not valid") from None
    if not isinstance(raw, dict):
        raise PayloadError("this button's value is not valid")
    return raw


def encode_target(ref: TargetRef) -> str:
    return _dump({"t": ref.to_dict()})


def decode_target(value: str) -> TargetRef:
    return TargetRef.from_dict(_load(value).get("t"))


@dataclass(frozen=True)
class EvidenceRef:
    target: TargetRef
    finding: int
    code: str


def encode_evidence(ref: EvidenceRef) -> str:
    return _dump({"t": ref.target.to_dict(), "i": ref.finding, "code": ref.code})


def decode_evidence(value: str) -> EvidenceRef:
    raw = _load(value)
    index, code = raw.get("i"), raw.get("code")
    if not isinstance(index, int) or not 0 <= index < 100 or not isinstance(code, str) or len(code) > 64:
        raise PayloadError("this button's value is not valid")
    return EvidenceRef(target=TargetRef.from_dict(raw.get("t")), finding=index, code=code)


@dataclass(frozen=True)
class ApprovalRequest:
    remediation: Remediation
    target: TargetRef
    code: str
    incident: int | None = None  # the incident of the diagnosis it came from: its thread hears the request


def encode_approval(request: ApprovalRequest) -> str:
    rem = request.remediation
    return _dump({"r": {"kind": rem.kind, "target": rem.target, "params": rem.params},
                  "t": request.target.to_dict(), "code": request.code,
                  **({"inc": request.incident} if request.incident is not None else {})})


def with_incident(blocks: list[dict], incident_id: int | None) -> list[dict]:
    """The diagnosis blocks with each Request approval button tied to the incident just recorded."""
    if incident_id is None:
        return blocks
    return map_buttons(blocks, lambda button: _dump({**_load(button["value"]), "inc": int(incident_id)})
                       if button.get("action_id") == ACTION_APPROVAL else None)


def decode_approval(value: str) -> ApprovalRequest:
    raw = _load(value)
    try:
        remediation = parse(raw.get("r"))
    except InvalidRemediation as exc:
        raise PayloadError(f"this remediation is not valid: {exc}") from None
    code, incident = raw.get("code"), raw.get("inc")
    if not isinstance(code, str) or len(code) > 64:
        raise PayloadError("this button's value is not valid")
    if incident is not None and (not isinstance(incident, int) or isinstance(incident, bool) or not 0 < incident < 2**31):
        raise PayloadError("this button's value is not valid")
    return ApprovalRequest(remediation=remediation, target=TargetRef.from_dict(raw.get("t")), code=code,
                           incident=incident)


def encode_proposal(proposal_id: int) -> str:
    return _dump({"proposal": int(proposal_id)})


def decode_proposal(value: str) -> int:
    raw = _load(value).get("proposal")
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 < raw < 2**31:
        raise PayloadError("this button's proposal is not valid")
    return raw


def encode_incident(incident_id: int) -> str:
    return _dump({"incident": int(incident_id)})


def decode_incident(value: str) -> int:
    raw = _load(value).get("incident")
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 < raw < 2**31:
        raise PayloadError("this button's incident is not valid")
    return raw


def encode_share(token: str) -> str:
    return _dump({"share": token})


def decode_share(value: str) -> str:
    token = _load(value).get("share")
    if not isinstance(token, str) or not 8 <= len(token) <= 64 or not token.replace("-", "").replace("_", "").isalnum():
        raise PayloadError("this button's value is not valid")
    return token
# Proactive alerts (bot.alerts): the period is in the action, so a sealed value cannot be re-aimed.
ACTION_ALERT_SNOOZE_HOUR = "gpubot.alert_snooze_1h"
ACTION_ALERT_SNOOZE_DAY = "gpubot.alert_snooze_1d"
ACTION_ALERT_SNOOZE_RESOLVED = "gpubot.alert_snooze_resolved"
ACTION_ALERT_ACKNOWLEDGE = "gpubot.alert_acknowledge"
