"""Controller settings read from the Karpenter pod: --min-values-policy / MIN_VALUES_POLICY
(kubernetes-sigs/karpenter pkg/operator/options/options.go, v1.6+)."""
from __future__ import annotations

from playbooks.karpenter.controller_settings import BEST_EFFORT, STRICT, min_values_policy, setting


def _pod(*, env=(), args=()) -> dict:
    return {"spec": {"containers": [{"name": "sidecar", "env": [{"name": "MIN_VALUES_POLICY", "value": "BestEffort"}]},
                                    {"name": "controller", "env": list(env), "args": list(args)}]}}


def test_env_sets_the_policy_from_v1_6():
    pod = _pod(env=[{"name": "MIN_VALUES_POLICY", "value": "BestEffort"}])
    assert min_values_policy(pod, version="1.6.0") == BEST_EFFORT
    assert min_values_policy(pod, version="1.10.1") == BEST_EFFORT
    assert min_values_policy(pod, version="1.5.4") == STRICT  # no such setting before v1.6: always enforced


def test_flag_wins_over_env_and_both_spellings_are_read():
    env = [{"name": "MIN_VALUES_POLICY", "value": "BestEffort"}]
    assert min_values_policy(_pod(env=env, args=["--min-values-policy=Strict"]), version="1.8.0") == STRICT
    assert min_values_policy(_pod(args=["--min-values-policy", "BestEffort"]), version="1.8.0") == BEST_EFFORT


def test_default_and_unreadable_values_are_strict():
    assert min_values_policy(_pod(), version="1.14.0") == STRICT  # the sidecar's variable is not the controller's
    ref = [{"name": "MIN_VALUES_POLICY", "valueFrom": {"configMapKeyRef": {"name": "karpenter", "key": "policy"}}}]
    assert setting(_pod(env=ref), flag="min-values-policy", env="MIN_VALUES_POLICY") is None
    assert min_values_policy(_pod(env=[{"name": "MIN_VALUES_POLICY", "value": "bestEffort"}]), version="1.8.0") == STRICT
    assert min_values_policy(None, version="1.8.0") == STRICT
