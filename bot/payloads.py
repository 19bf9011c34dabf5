"""What a button carries: small, typed, validated on the way back in.

Slack echoes a button's ``value`` (at most 2000 characters) in the click's payload; a click may be
forged or replayed like any request, so every value is decoded through the same validation as
typed input before anything acts on it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from bot.errors import UserError
from bot.targets import KINDS, validate_context, validate_name, validate_namespace
from playbooks.model import Diagnosis, Remediation
from playbooks.remediations import InvalidRemediation, parse

ACTION_RERUN = "gpubot.rerun"
ACTION_EVIDENCE = "gpubot.show_evidence"
ACTION_APPROVAL = "gpubot.request_approval"
ACTION_ACKNOWLEDGE = "gpubot.incident_acknowledge"
ACTION_RESOLVE = "gpubot.incident_resolve"
MAX_VALUE = 2000


class PayloadError(UserError):
    pass


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


def encode_approval(request: ApprovalRequest) -> str:
    rem = request.remediation
    return _dump({"r": {"kind": rem.kind, "target": rem.target, "params": rem.params},
                  "t": request.target.to_dict(), "code": request.code})


def decode_approval(value: str) -> ApprovalRequest:
    raw = _load(value)
    try:
        remediation = parse(raw.get("r"))
    except InvalidRemediation as exc:
        raise PayloadError(f"this remediation is not valid: {exc}") from None
    code = raw.get("code")
    if not isinstance(code, str) or len(code) > 64:
        raise PayloadError("this button's value is not valid")
    return ApprovalRequest(remediation=remediation, target=TargetRef.from_dict(raw.get("t")), code=code)


def encode_incident(incident_id: int) -> str:
    return _dump({"incident": int(incident_id)})


def decode_incident(value: str) -> int:
    raw = _load(value).get("incident")
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 < raw < 2**31:
        raise PayloadError("this button's incident is not valid")
    return raw
