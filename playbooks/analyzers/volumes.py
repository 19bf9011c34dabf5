"""PersistentVolumeClaims the job's pods wait for that nothing provisions or binds.

gather reads the claims of pending pods by name and, for a claim not yet Bound, its events: the CSI
provisioner's ``ProvisioningFailed`` (``failed to provision volume with StorageClass "x": ... could not
create volume in EC2: UnauthorizedOperation``), the persistent volume controller's ``FailedBinding`` (``no
persistent volumes available for this claim and no storage class is set``) and ``ExternalProvisioning``
(``waiting for a volume to be created, either by external provisioner "ebs.csi.aws.com" ...``). The
scheduler's ``running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "x"`` on
the pod says the same from the pod's side. Text rules: signatures/volumes.py (sources there:
kubernetes/kubernetes pkg/controller/volume/persistentvolume/pv_controller.go, pkg/scheduler/framework/
plugins/volumebinding/binder.go, kubernetes-sigs/aws-ebs-csi-driver pkg/cloud/cloud.go).

Only waiting for the provisioner is the normal state of a new claim; past ``WAITING_GRACE_S`` with
nothing else said, the provisioner is not there or not answering, and that is a warning.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers import evidence as ev
from playbooks.explain import fix_context, template_for
from playbooks.facts import Facts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.signatures import Signal, scan_line
from playbooks.signatures.details import View, describe

CODE = "storage.provisioning_failed"
WAITING_GRACE_S = 600  # the EBS CSI driver creates a volume in seconds; ten minutes is not provisioning
PROVISIONER_ANNOTATIONS = ("volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner")


def analyze(facts: Facts):
    found: list[tuple[Signal, dict, str]] = []  # (signal, fields about its claim, claim key)
    evidence: list[tuple[tuple[int, int], Evidence]] = []  # (strength, the claim's own words first), evidence
    for key, events in sorted(facts.volume_events.items()):
        claim = _claim_fields(key, facts.volumes.get(key) or {})
        for event in events:
            message = event.get("message") or event.get("note") or ""
            hits = [s for s in scan_line(message, source=ev.event_source(key, event)) if s.code == CODE]
            found.extend((s, claim, key) for s in hits)
            if hits:
                evidence.append(((min(s.rank for s in hits)[0], 0), Evidence(source=ev.event_source(key, event), text=ev.trim(message))))
    for pod in facts.pending_pods():
        for event in pod.events:
            message = event.get("message") or event.get("note") or ""
            hits = [s for s in scan_line(message, source=ev.event_source(pod.ref, event)) if s.code == CODE]
            claim = {"namespace": pod.namespace, **({"pvc": hits[0].fields["pvc"]} if hits and "pvc" in hits[0].fields else {})}
            found.extend((s, claim, "") for s in hits)
            if hits:
                # the scheduler's words only say that provisioning failed: after the claim's own
                evidence.append(((min(s.rank for s in hits)[0], 1), Evidence(source=ev.event_source(pod.ref, event), text=ev.trim(message))))
    if not found:
        return
    serious = [item for item in found if item[0].severity != "info"]
    if serious:
        yield _finding(serious, evidence, severity=None)
        return
    late = [item for item in found if item[2] and _age(facts.volumes.get(item[2]) or {}) > WAITING_GRACE_S]
    if late:
        yield _finding(late, evidence, severity="warning")


def _claim_fields(key: str, pvc: dict) -> dict[str, str]:
    _, namespace, name = key.split("/", 2)
    meta, spec = pvc.get("metadata") or {}, pvc.get("spec") or {}
    fields = {"pvc": name, "namespace": namespace}
    if spec.get("storageClassName"):
        fields["storageclass"] = spec["storageClassName"]
    annotations = meta.get("annotations") or {}
    provisioner = next((annotations[a] for a in PROVISIONER_ANNOTATIONS if annotations.get(a)), "")
    if provisioner:
        fields["provisioner"] = provisioner
    return fields


def _age(pvc: dict) -> float:
    created = ev.parse_time((pvc.get("metadata") or {}).get("creationTimestamp"))
    return -1.0 if created is None else (datetime.now(timezone.utc) - created).total_seconds()


def _finding(items: list[tuple[Signal, dict, str]], evidence: list[tuple[tuple[int, int], Evidence]], *,
             severity: str | None) -> Finding:
    ranked = sorted(items, key=lambda item: (item[0].rank, -len(item[0].fields), not item[2]))
    best, claim, _ = ranked[0]
    fields = {**claim, **best.fields}
    values: dict[str, tuple[str, ...]] = {}
    for sig, about, _ in ranked:
        for name, value in {**about, **sig.fields}.items():
            fields.setdefault(name, value)
            if value not in values.get(name, ()):
                values[name] = values.get(name, ()) + (value,)
    claims = sorted(set(values.get("pvc", ())))
    view = View(code=CODE, fields=fields, values=values, count=len(items), confidence=best.confidence,
                codes=frozenset({CODE}))
    detail = describe(view)
    if severity == "warning":
        detail = (f"The claim has waited more than {WAITING_GRACE_S // 60} minutes for its provisioner, with no "
                  f"error recorded: {detail}")
    who = f"PersistentVolumeClaim {'/'.join(filter(None, (fields.get('namespace'), fields.get('pvc'))))}: " if claims else ""
    more = f" (and {len(claims) - 1} more claim{'s' if len(claims) > 2 else ''})" if len(claims) > 1 else ""
    return Finding(
        code=CODE, severity=severity or best.severity, confidence=best.confidence,
        title=f"{who}{best.title}{more}", detail=detail,
        evidence=[e for _, e in sorted(evidence, key=lambda item: item[0])][:6],
        fix=render_fix(template_for(CODE), **fix_context(CODE, fields)),
    )
