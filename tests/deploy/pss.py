"""The `restricted` Pod Security Standard as checks on a pod spec, one function per control.

Written from https://kubernetes.io/docs/concepts/security/pod-security-standards/ (Kubernetes 1.33):
the Restricted profile is the Baseline controls plus its own. Each check returns the violations as
"control: field: what is wrong" strings; [] passes.
"""
from __future__ import annotations

from typing import Iterator

# Baseline "Capabilities": adding any other is forbidden.
BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
# Baseline "Sysctls": the safe set.
SAFE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                          "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                          "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                          "net.ipv4.tcp_keepalive_probes"})
# Baseline "SELinux": allowed types.
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
# Restricted "Volume Types": only these.
RESTRICTED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                                "persistentVolumeClaim", "projected", "secret"})
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _containers(pod: dict) -> Iterator[tuple[str, dict]]:
    for field in CONTAINER_LISTS:
        for i, container in enumerate(pod.get(field) or []):
            yield f"spec.{field}[{i}]", container


def _sc(obj: dict) -> dict:
    return obj.get("securityContext") or {}


def baseline(pod: dict) -> list[str]:
    out = []
    psc = _sc(pod)
    if (psc.get("windowsOptions") or {}).get("hostProcess"):
        out.append("HostProcess: spec.securityContext.windowsOptions.hostProcess must be unset or false")
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field):
            out.append(f"Host Namespaces: spec.{field} must be unset or false")
    for i, volume in enumerate(pod.get("volumes") or []):
        if "hostPath" in volume:
            out.append(f"HostPath Volumes: spec.volumes[{i}] is a hostPath")
    out += _selinux("spec.securityContext", psc)
    if (psc.get("seccompProfile") or {}).get("type") == "Unconfined":
        out.append("Seccomp: spec.securityContext.seccompProfile.type must not be Unconfined")
    if (psc.get("appArmorProfile") or {}).get("type") == "Unconfined":
        out.append("AppArmor: spec.securityContext.appArmorProfile.type must not be Unconfined")
    for sysctl in psc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"Sysctls: {sysctl.get('name')} is not in the safe set")
    for where, container in _containers(pod):
        sc = _sc(container)
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            out.append(f"HostProcess: {where}.securityContext.windowsOptions.hostProcess must be unset or false")
        if sc.get("privileged"):
            out.append(f"Privileged Containers: {where}.securityContext.privileged must be unset or false")
        for cap in (sc.get("capabilities") or {}).get("add") or []:
            if cap not in BASELINE_CAPABILITIES:
                out.append(f"Capabilities: {where} adds {cap}")
        for j, port in enumerate(container.get("ports") or []):
            if port.get("hostPort", 0):
                out.append(f"Host Ports: {where}.ports[{j}].hostPort must be unset or 0")
        out += _selinux(f"{where}.securityContext", sc)
        if sc.get("procMount", "Default") != "Default":
            out.append(f"/proc Mount Type: {where}.securityContext.procMount must be Default")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(f"Seccomp: {where}.securityContext.seccompProfile.type must not be Unconfined")
        if (sc.get("appArmorProfile") or {}).get("type") == "Unconfined":
            out.append(f"AppArmor: {where}.securityContext.appArmorProfile.type must not be Unconfined")
    return out


def _selinux(where: str, sc: dict) -> list[str]:
    options = sc.get("seLinuxOptions") or {}
    out = []
    if options.get("type", "") not in SELINUX_TYPES:
        out.append(f"SELinux: {where}.seLinuxOptions.type {options['type']!r} is not allowed")
    for field in ("user", "role"):
        if options.get(field):
            out.append(f"SELinux: {where}.seLinuxOptions.{field} must be unset")
    return out


def restricted(pod: dict) -> list[str]:
    out = baseline(pod)
    psc = _sc(pod)
    for i, volume in enumerate(pod.get("volumes") or []):
        kind = next((k for k in volume if k != "name"), None)
        if kind not in RESTRICTED_VOLUMES:
            out.append(f"Volume Types: spec.volumes[{i}] is a {kind} volume")
    if psc.get("runAsUser") == 0:
        out.append("Running as Non-root user: spec.securityContext.runAsUser must not be 0")
    for where, container in _containers(pod):
        sc = _sc(container)
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"Privilege Escalation: {where}.securityContext.allowPrivilegeEscalation must be false")
        # A container may leave runAsNonRoot to the pod, but must not say false.
        if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is not True:
            out.append(f"Running as Non-root: {where}: runAsNonRoot must be true (pod or container)")
        if sc.get("runAsUser") == 0:
            out.append(f"Running as Non-root user: {where}.securityContext.runAsUser must not be 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"Seccomp: {where}: seccompProfile.type must be RuntimeDefault or Localhost (pod or container)")
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            out.append(f"Capabilities: {where}.securityContext.capabilities.drop must include ALL")
        for cap in capabilities.get("add") or []:
            if cap != "NET_BIND_SERVICE":
                out.append(f"Capabilities: {where} may add only NET_BIND_SERVICE, adds {cap}")
    return out
