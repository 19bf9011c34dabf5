"""Settings of the Karpenter controller read from its pod: a command-line flag wins over the environment
variable that gives its default (kubernetes-sigs/karpenter pkg/operator/options/options.go AddFlags:
``fs.StringVar(..., env.WithDefaultString("MIN_VALUES_POLICY", "Strict"), ...)`` then ``fs.Parse``)."""
from __future__ import annotations

from playbooks.karpenter.labels import at_least

STRICT = "Strict"
BEST_EFFORT = "BestEffort"
# options.go: --min-values-policy / MIN_VALUES_POLICY exist from v1.6.0 (Strict | BestEffort); earlier
# releases always enforce minValues.
MIN_VALUES_POLICY_SINCE = (1, 6)


def _container(pod: dict) -> dict:
    containers = (pod.get("spec") or {}).get("containers") or []
    return next((c for c in containers if c.get("name") == "controller"), containers[0] if containers else {})


def setting(pod: dict, *, flag: str, env: str) -> str | None:
    """The value of ``--flag`` in the controller's args, else of ``env`` in its environment; None when
    neither is set or the variable comes from a reference (valueFrom) this pod does not show."""
    container = _container(pod)
    args = [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
    for index, arg in enumerate(args):
        if arg.startswith(f"--{flag}="):
            return arg.split("=", 1)[1]
        if arg == f"--{flag}" and index + 1 < len(args):
            return args[index + 1]
    for var in container.get("env") or []:
        if var.get("name") == env and "value" in var:
            return str(var["value"])
    return None


def min_values_policy(pod: dict | None, *, version: str | None) -> str:
    """Strict or BestEffort. BestEffort relaxes an unmet minValues to what the remaining instance types
    give and launches (pkg/controllers/provisioning/scheduling/nodeclaim.go filterInstanceTypesByRequirements,
    relaxMinValues); Strict, the default and the only behaviour before v1.6, launches nothing."""
    if pod is None or not at_least(version, MIN_VALUES_POLICY_SINCE):
        return STRICT
    value = setting(pod, flag="min-values-policy", env="MIN_VALUES_POLICY")
    return BEST_EFFORT if value == BEST_EFFORT else STRICT
