"""The NVIDIA device plugin is found whoever installed it: the GPU Operator's DaemonSet
(NVIDIA/gpu-operator assets/state-device-plugin/0500_daemonset.yaml: nvidia-device-plugin-daemonset,
app=nvidia-device-plugin-daemonset, in the operator's namespace, gpu-operator by default), the
k8s-device-plugin Helm chart (app.kubernetes.io/name=nvidia-device-plugin) or its static manifest."""
from __future__ import annotations

from playbooks.gather import DEVICE_PLUGIN_SELECTORS, device_plugin_selectors, is_device_plugin

GPU_OPERATOR = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "gpu-operator",
                             "labels": {"app": "nvidia-device-plugin-daemonset"}},
                "spec": {"selector": {"matchLabels": {"app": "nvidia-device-plugin-daemonset"}}}}
MPS_DAEMON = {"metadata": {"name": "nvidia-device-plugin-mps-control-daemon", "namespace": "gpu-operator",
                           "labels": {"app": "nvidia-device-plugin-mps-control-daemon"}},
              "spec": {"selector": {"matchLabels": {"app": "nvidia-device-plugin-mps-control-daemon"}}}}
EFA = {"metadata": {"name": "aws-efa-k8s-device-plugin-daemonset", "namespace": "kube-system",
                    "labels": {"name": "aws-efa-k8s-device-plugin"}},
       "spec": {"selector": {"matchLabels": {"name": "aws-efa-k8s-device-plugin"}}}}


def test_the_gpu_operator_daemonset_is_a_device_plugin_and_its_selector_is_used():
    assert is_device_plugin(GPU_OPERATOR)
    assert device_plugin_selectors([EFA, MPS_DAEMON, GPU_OPERATOR]) == ["app=nvidia-device-plugin-daemonset"]


def test_without_daemonsets_every_known_installer_is_tried():
    assert device_plugin_selectors([]) == list(DEVICE_PLUGIN_SELECTORS)
    assert "app=nvidia-device-plugin-daemonset" in DEVICE_PLUGIN_SELECTORS
    assert device_plugin_selectors([EFA]) == list(DEVICE_PLUGIN_SELECTORS)  # the EFA plugin is not NVIDIA's
