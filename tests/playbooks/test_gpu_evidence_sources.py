"""A GPU finding's detail names where its evidence came from: a pod log's CUDA error is the process's own view,
not the device plugin's verdict (signatures/details_gpu.py unhealthy_device)."""
from __future__ import annotations

from playbooks.explain import explain_text

POD_LOG = ("Traceback (most recent call last):\n  File \"/workspace/train.py\", line 88, in <module>\n"
           "    loss.backward()\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n")
NCCL_LOG = "ip-10-1-77-12:105:180 [0] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'\n"
PLUGIN = ("I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-1f0c-4d1b-9a7e-"
          "0c3b5d2e6f70; marking device as unhealthy.\n")


def _gpu(text: str):
    [finding] = [f for f in explain_text(text).findings if f.code == "gpu.unhealthy_device"]
    return finding


def test_a_pod_logs_ecc_error_is_not_the_device_plugins_verdict():
    detail = _gpu(POD_LOG).detail
    assert "device plugin marked" not in detail and "training process's own log" in detail
    assert "not a verdict of the device plugin" in detail and "dmesg" in detail


def test_ncclss_cuda_failure_is_named_as_ncclss_warn_line():
    detail = _gpu(NCCL_LOG).detail
    assert "NCCL's WARN line in the pod log" in detail and "device plugin marked" not in detail


def test_the_device_plugins_own_line_still_says_so():
    assert "The NVIDIA device plugin marked GPU(s) unhealthy after Xid 48" in _gpu(PLUGIN).detail
