"""Whether ``karpenter.sh/do-not-disrupt`` protects a pod now, read the way Karpenter reads it.

- Up to v1.11 (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go HasDoNotDisrupt): only the exact
  string "true" protects; anything else ("True", "yes", "2h") is as if the annotation were absent.
- From v1.12 (kubernetes-sigs/karpenter#2874, "Add grace period for do-not-disrupt annotation";
  pkg/utils/pod/scheduling.go IsDoNotDisruptActive): "true" protects for good; a positive Go
  ``time.Duration`` ("5m", "2h30m", "1.5h") protects until the pod has run that long, counted from
  ``status.startTime`` (a pod without one is protected: fail safe); any other value is treated as absent
  (and Karpenter publishes an InvalidDoNotDisruptAnnotation event).

So a pod annotated "2h" that started three hours ago is not protected, and neither is one annotated
"True". The Karpenter version is the controller's image tag when gpubot found it; unknown, current
behaviour is assumed.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from playbooks import linear
from playbooks.analyzers.evidence import parse_time
from playbooks.durations import parse_go_duration  # noqa: F401  (Karpenter reads the annotation with it)
from playbooks.remediations.proposals import DO_NOT_DISRUPT

DURATIONS_SINCE = (1, 12)  # first Karpenter minor release that reads a duration
_VERSION = linear.compile(r"v?([0-9]{1,6})\.([0-9]{1,6})")


def _version(text: str | None) -> tuple[int, int] | None:
    m = _VERSION.match(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class Protection:
    active: bool
    value: str | None  # the annotation as written; None: absent
    why: str  # one clause for a finding's detail: "annotated \"2h\", which ran out at 12:00 UTC"
    until: datetime | None = None  # when a duration protection ends (or ended)

    @property
    def expired(self) -> bool:
        return self.until is not None and not self.active


def protection(pod: dict, *, now: datetime | None = None, karpenter_version: str | None = None) -> Protection:
    meta = pod.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(DO_NOT_DISRUPT)
    if value is None:
        return Protection(False, None, f"no {DO_NOT_DISRUPT} annotation")
    value = str(value)
    if value == "true":
        return Protection(True, value, f'{DO_NOT_DISRUPT}: "true"')
    duration = parse_go_duration(value)
    version = _version(karpenter_version)
    if duration is None or duration <= timedelta(0):
        return Protection(False, value, f'{DO_NOT_DISRUPT}: "{value}", which Karpenter ignores (only "true" or a '
                                        f'positive duration such as "24h")')
    if version is not None and version < DURATIONS_SINCE:
        return Protection(False, value, f'{DO_NOT_DISRUPT}: "{value}", a duration, which Karpenter {karpenter_version} '
                                        f'ignores (durations count from v1.12; before that only "true" protects)')
    started = parse_time(((pod.get("status") or {}).get("startTime")))
    if started is None:
        return Protection(True, value, f'{DO_NOT_DISRUPT}: "{value}" (the pod has no start time yet)')
    until = started + duration
    now = now or datetime.now(timezone.utc)
    when = until.strftime("%Y-%m-%d %H:%M UTC")
    if now < until:
        return Protection(True, value, f'{DO_NOT_DISRUPT}: "{value}", protected until {when}', until)
    return Protection(False, value, f'{DO_NOT_DISRUPT}: "{value}", which ran out at {when} (the pod started '
                                    f'{started.strftime("%Y-%m-%d %H:%M UTC")})', until)


def is_protected(pod: dict, *, now: datetime | None = None, karpenter_version: str | None = None) -> bool:
    return protection(pod, now=now, karpenter_version=karpenter_version).active


def valid_value(value: object, *, karpenter_version: str | None = None) -> bool:
    """Whether an annotation value (on a pod template, where no clock runs yet) is one Karpenter reads."""
    if value == "true":
        return True
    duration = parse_go_duration(str(value)) if isinstance(value, str) else None
    version = _version(karpenter_version)
    return duration is not None and duration > timedelta(0) and (version is None or version >= DURATIONS_SINCE)
