"""The generated failure tables: reproducible from their checked-in inputs, complete, and looked up by
name, number and upstream's own message."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from playbooks import linear
from playbooks.failures import tables
from playbooks.failures.tables import (CLASSES, cuda_error, errno_entry, exception_entry, nccl_result,
                                       nccl_warning, signal_entry, xid_entry)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "playbooks" / "failures" / "data"
CAPTURED = json.loads((ROOT / "scripts" / "gpu_failures" / "captured" / "tables.json").read_text())
CODES = {"training.code_error", "training.cuda_oom", "training.gpu_not_visible", "gpu.unhealthy_device",
         "training.numerical", "storage.disk_full", "nccl.network_config", "nccl.peer_unresponsive",
         "nccl.invalid_usage", "nccl.timeout", "training.rendezvous_failed", "training.shm_exhausted",
         "training.terminated"}


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def test_generator_reproduces_the_checked_in_tables_byte_for_byte(tmp_path):
    date = load("cuda_runtime")["generated"]
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_failure_tables.py"), "--out", str(tmp_path),
                          "--date", date, "--mirrors", str(tmp_path / "no-mirrors")],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == sorted(p.name for p in DATA.glob("*.json"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), f"{name} differs: regenerate it"
    counts = dict(re.findall(r"(\w+) (\d+)", run.stdout.split("entries:", 1)[1]))
    assert {f"{k}.json" for k in counts} == set(written)
    for name, count in counts.items():
        assert int(count) == len(load(name)["entries"]) > 0


def test_refresh_without_mirrors_says_what_to_fetch_and_writes_nothing(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_failure_tables.py"), "--out", str(tmp_path),
                          "--refresh", "--mirrors", str(tmp_path / "none")], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode != 0 and "fetch github:NVIDIA/nccl" in run.stderr
    assert not list(tmp_path.glob("*.json"))


def test_bad_date_is_refused_in_one_line(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_failure_tables.py"), "--out", str(tmp_path),
                          "--date", "yesterday"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "--date 'yesterday' is not YYYY-MM-DD" in run.stderr
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.json")))
def test_every_table_names_its_source_and_classes_every_entry(name):
    data = load(name)
    assert data["source"] and data["generator"] == "scripts/gen_failure_tables.py"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", data["generated"])
    for row in data["entries"]:
        if name == "xid":
            assert row["kind"] in ("application", "hardware", "driver", "informational")
            assert row["action"] in ("none", "restart_app", "reset_gpu", "drain", "reboot", "investigate")
        else:
            assert row["class"] in CLASSES, row
            assert row["code"] is None or row["code"] in CODES, row
        assert row["meaning"].strip(), row


def test_every_captured_cuda_error_has_a_class_and_is_found_by_name_number_and_message():
    for table, lookup_name in (("cuda_runtime", "name"), ("cuda_driver", "name")):
        for e in CAPTURED[table]["errors"]:
            found = cuda_error(e[lookup_name])
            assert found is not None and found.klass in CLASSES and found.message == e["message"]
            assert cuda_error(e["code"]).number == e["code"]
            by_message = cuda_error(f"CUDA error: {e['message']}")
            assert by_message is not None and by_message.message == e["message"]


def test_cuda_lookups():
    assert cuda_error("an illegal memory access was encountered").name == "cudaErrorIllegalAddress"
    assert cuda_error("CUDA error: an  illegal memory\naccess was encountered").name == "cudaErrorIllegalAddress"
    assert cuda_error("CUDA_ERROR_MISALIGNED_ADDRESS").klass == "code"
    assert cuda_error("uncorrectable ECC error encountered").klass == "hardware"
    assert cuda_error("uncorrectable ECC error encountered").code == "gpu.unhealthy_device"
    assert cuda_error("device-side assert triggered").code == "training.code_error"
    assert cuda_error("out of memory").code == "training.cuda_oom"
    assert cuda_error("too many resources requested for launch").klass == "resources"
    assert cuda_error("too many resources requested for launch").code is None
    assert cuda_error("CUDA error: invalid device ordinal").code == "training.gpu_not_visible"
    assert cuda_error("no CUDA-capable device is detected").code == "training.gpu_not_visible"
    assert cuda_error(700).name == "cudaErrorIllegalAddress"
    assert cuda_error("not an error anyone prints") is None


def test_only_hardware_reports_blame_the_gpu():
    hardware = {e.name for e in map(cuda_error, [e["name"] for e in CAPTURED["cuda_runtime"]["errors"]])
                if e.klass == "hardware"}
    assert hardware == {"cudaErrorECCUncorrectable", "cudaErrorHardwareStackError", "cudaErrorNvlinkUncorrectable",
                        "cudaErrorContained"}
    assert cuda_error("cudaErrorContained").code is None  # containment names no culprit without its Xid


def test_nccl_results():
    for r in CAPTURED["nccl"]["results"]:
        if r["message"] != "unknown result code":
            assert nccl_result(r["code"]).message == r["message"]
    assert nccl_result("unhandled system error").name == "ncclSystemError"
    assert nccl_result("invalid usage").code == "nccl.invalid_usage"
    assert nccl_result("ncclRemoteError").code == "nccl.peer_unresponsive"
    assert nccl_result("remote process exited or there was a network error, NCCL version 2.28.9").number == 6
    assert nccl_result("invalid") is None  # a prefix of two results names neither


def test_every_nccl_pattern_compiles_with_re2_and_matches_its_own_format():
    rows = load("nccl_warnings")["entries"]
    assert len(rows) >= 200
    for row in rows:
        pattern = linear.compile(row["pattern"])
        assert pattern.fullmatch(row["sample"]), row["name"]
        assert nccl_warning(row["sample"]) is not None, row["name"]


def test_nccl_warning_lookups():
    assert nccl_warning("Bootstrap : no socket interface found").code == "nccl.network_config"
    assert nccl_warning("Error: network AWS Libfabric not found.").code == "nccl.network_config"
    assert nccl_warning("[2026-11-25 23:58:33] vm:961:961 [0] plugin/net.cc:379 NCCL WARN Failed to initialize any "
                        "NET plugin").code == "nccl.network_config"
    assert nccl_warning("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60").code == "nccl.invalid_usage"
    cuda = nccl_warning("Cuda failure 'uncorrectable ECC error encountered'")
    assert cuda.name == "Cuda failure '%s'" and cuda.code is None
    assert nccl_warning("Cuda failure 700 'an illegal memory access was encountered'").name == "Cuda failure %d '%s'"
    shm = nccl_warning("Error: failed to extend /dev/shm/nccl-2cRz6f to 9637892 bytes, error: No space left on device (28)")
    assert shm.code == "training.shm_exhausted"
    assert nccl_warning("socketProgress: Connection closed by remote peer ip-10-0-1-7<52340>").code == "nccl.peer_unresponsive"
    assert nccl_warning("nothing NCCL ever printed") is None



def test_nccl_warnings_of_the_releases_before_2_21_are_read():
    # NCCL 2.14 to 2.20 (torch 1.13 to 2.4) printed socket.cc's warnings as "Net : ..." where 2.21 prints
    # "socketProgress: ..."; both are in the table, classed alike.
    source = load("nccl_warnings")["source"]
    for tag in ("v2.14.3-1", "v2.18.6-1", "v2.19.4-1", "v2.20.5-1"):
        assert f"{tag} (" in source
    closed = nccl_warning("Net : Connection closed by remote peer a100-st-p4d24xlarge-22.pcluster<47861>")
    assert closed.code == "nccl.peer_unresponsive" and closed.name == "Net : Connection closed by remote peer %s"
    row = next(r for r in load("nccl_warnings")["entries"] if r["name"] == closed.name)
    assert any(w.startswith("v2.14.3-1:src/misc/socket.cc:") for w in row["where"])
    assert closed.code == nccl_warning("socketProgress: Connection closed by remote peer a100-st-22<47861>").code
    recv = nccl_warning("Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe")
    assert recv is not None and recv.name == "Net : Call to recv from %s failed : %s"
    assert recv.klass in ("network", "distributed")
    assert recv.klass == nccl_warning("socketProgressOpt: Call to recv from 10.0.0.7<41424> failed : "
                                      "Connection reset by peer").klass
    prefixed = nccl_warning("a100-st-p4d24xlarge-21:3512:3590 [3] misc/socket.cc:538 NCCL WARN Net : Connection "
                            "closed by remote peer a100-st-p4d24xlarge-22.pcluster<47861>")
    assert prefixed is closed

def test_errno_covers_python_and_glibc():
    import errno
    import os
    for number, name in errno.errorcode.items():
        assert errno_entry(name).klass in CLASSES
        assert errno_entry(number).number == number
    assert errno_entry(28).code == "storage.disk_full"
    assert errno_entry("EDQUOT").code == "storage.disk_full"
    assert errno_entry("No space left on device").name == "ENOSPC"
    assert errno_entry(os.strerror(errno.ECONNREFUSED)).klass == "network"
    assert errno_entry("ENOMEM").klass == "resources" and errno_entry("ENOMEM").code is None
    assert errno_entry("EACCES").klass == errno_entry("EROFS").klass == "permission"
    assert errno_entry("ENOENT").klass == "environment"
    assert errno_entry("EWOULDBLOCK").number == errno.EAGAIN


def test_signals():
    assert signal_entry("Bus error").name == "SIGBUS"
    assert signal_entry("SIGBUS").code == "training.shm_exhausted"
    assert signal_entry(9).code == signal_entry(-9).code == "training.terminated"
    assert signal_entry("Killed").name == "SIGKILL"
    assert signal_entry(137).name == "SIGKILL"
    assert signal_entry("Segmentation fault (core dumped)").name == "SIGSEGV"
    assert signal_entry("SIGSEGV").code is None and signal_entry("SIGABRT").klass == "code"
    assert signal_entry("TERM").klass == "external"
    assert signal_entry("no such signal") is None


def test_exceptions():
    import builtins
    for name in dir(builtins):
        obj = getattr(builtins, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert exception_entry(name) is not None, name
    assert exception_entry("torch.AcceleratorError") is not None
    assert exception_entry("torch.OutOfMemoryError").code == "training.cuda_oom"
    assert exception_entry("OutOfMemoryError").name == "torch.OutOfMemoryError"
    assert exception_entry("torch.distributed.DistBackendError").klass == "distributed"
    assert exception_entry("cupy_backends.cuda.api.runtime.CUDARuntimeError") is not None
    assert exception_entry("ModuleNotFoundError").klass == "image"
    assert exception_entry("FileNotFoundError").klass == "environment"
    assert exception_entry("MemoryError").klass == "resources"
    for name in ("KeyError", "IndexError", "ValueError", "TypeError", "AssertionError", "AttributeError"):
        assert exception_entry(f"builtins.{name}").klass == "code"
    assert exception_entry("DeprecationWarning").klass == "benign"
    assert exception_entry("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError").code == \
        "training.rendezvous_failed"
    assert exception_entry("") is None and exception_entry("my.pkg.NothingLikeIt") is None
    # another library's class of the same last name is not PyTorch's: Ray's is host memory
    assert exception_entry("ray.exceptions.OutOfMemoryError").code == "training.terminated"
    assert exception_entry("mylib.errors.OutOfMemoryError") is None


def test_xids():
    assert xid_entry(94).action == "restart_app"
    assert xid_entry(79).action == "drain"
    assert xid_entry(63).action == "reset_gpu"
    assert xid_entry(154).action == "none"
    assert xid_entry(13).kind == "application"
    assert xid_entry(99999) is None


def test_xid_table_holds_every_application_xid_the_device_plugin_ignores():
    plugin = json.loads((ROOT / "scripts" / "gpu_failures" / "upstream" / "k8s_device_plugin.json").read_text())
    ignored = {x["xid"] for x in plugin["ignored_xids"]}
    assert {13, 31, 43, 45, 68, 109} <= ignored
    for xid in ignored:
        assert xid_entry(xid).action in ("restart_app", "none"), xid


def test_tables_are_read_once():
    tables._rows.cache_clear()
    tables._index.cache_clear()
    cuda_error(700)
    cuda_error(701)
    assert tables._rows.cache_info().misses == 2  # runtime and driver, each read once


# --- the Xid table drives the Xid finding: title, detail and fix follow one action ------------------

def _xid_signal(xid: int, tail: str = "pid=2451, name=python, detail"):
    from playbooks.signatures import scan_line
    [signal] = [s for s in scan_line(f"[ 5123.4] NVRM: Xid (PCI:0000:10:1c): {xid}, {tail}", source="t")
                if s.code in ("gpu.xid_error", "training.code_error")]
    return signal


@pytest.mark.parametrize("xid", [row["xid"] for row in load("xid")["entries"]])
def test_xid_title_and_fix_never_contradict(xid):
    from playbooks.fixes import render_fix
    from playbooks.signatures.gpu import CODE_XIDS

    signal = _xid_signal(xid, "GPU recovery action changed from 0x0 (None) to 0x0 (None)" if xid == 154 else
                         "pid=2451, name=python, detail")
    if xid in CODE_XIDS:
        assert signal.code == "training.code_error" and "not the hardware" in signal.title
        return
    action = signal.fields["action"]
    assert action == xid_entry(xid).action
    fix = render_fix("generic/gpu.xid_error.sh.j2", **signal.fields)
    drains = "kubectl drain" in fix.snippet.replace("# kubectl", "#")
    if action == "investigate":  # a catalogued Xid NVIDIA gives no fixed step for: look before acting
        assert "not in NVIDIA's Xid catalogue" not in signal.title and "check dmesg" in signal.title
        assert "read dmesg and nvidia-smi -q before acting" in fix.summary
    elif action == "none":
        assert signal.severity == "info" and "no action needed" in signal.title and not drains
        assert "no action needed" in fix.summary
    elif action == "restart_app":
        assert signal.severity == "warning" and "restart it" in signal.title and not drains
        assert "drain" not in signal.title and "drain" not in fix.summary
    elif action == "reset_gpu":
        assert "reset" in signal.title and "nvidia-smi -r" in fix.snippet and "delete node" not in fix.snippet
    else:
        assert action in ("drain", "reboot") and signal.severity == "critical"
        assert "drain" in signal.title and drains and "delete node" in fix.snippet


def test_xid_94_restarts_the_application_and_79_drains_the_node():
    from playbooks.explain import explain_text

    [contained] = explain_text("NVRM: Xid (PCI:0000:10:1c): 94, pid=2451, Contained: ECC error").findings
    assert contained.code == "gpu.xid_error" and contained.severity == "warning"
    assert "drain" not in contained.title and "Treat the node as faulty" not in contained.detail
    assert "do not drain" in contained.detail and "kubectl drain" not in contained.fix.snippet
    [gone] = explain_text("NVRM: Xid (PCI:0000:10:1c): 79, pid=2451, GPU has fallen off the bus.").findings
    assert gone.severity == "critical" and "kubectl drain" in gone.fix.snippet and "Treat the node as faulty" in gone.detail


def test_xid_154_follows_the_recovery_action_it_names():
    assert _xid_signal(154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)").severity == "info"
    assert _xid_signal(154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)").fields["action"] == "reset_gpu"
    assert _xid_signal(154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)").fields["action"] == "reboot"
    assert _xid_signal(154, "GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)").fields["action"] == "drain"
    assert _xid_signal(154, "something else").fields["action"] == "investigate"


def test_xid_63_wants_a_reset_not_a_drain_and_an_unknown_xid_is_not_blamed_on_hardware():
    remap = _xid_signal(63, "pid='N/A', Row Remapper: New row marked for remapping, reset gpu to activate.")
    assert remap.fields["action"] == "reset_gpu" and remap.severity == "error"
    unknown = _xid_signal(777)
    assert unknown.fields["action"] == "investigate" and "hardware fault" not in unknown.title


def test_signature_xid_sets_come_from_the_table():
    from playbooks.signatures.gpu import APPLICATION_XIDS, CODE_XIDS, HARDWARE_XIDS

    assert CODE_XIDS == {13, 31, 43} and CODE_XIDS <= APPLICATION_XIDS
    assert {13, 31, 43, 68, 109} <= APPLICATION_XIDS and 94 in HARDWARE_XIDS and 79 in HARDWARE_XIDS
    assert all(xid_entry(x).kind == "application" for x in APPLICATION_XIDS)
    assert all(xid_entry(x).kind == "hardware" for x in HARDWARE_XIDS)


# --- the Xid table is NVIDIA's whole catalogue, each action saying whose it is ------------------------

def test_xid_table_holds_nvidias_whole_catalogue():
    rows = {row["xid"]: row for row in load("xid")["entries"]}
    assert set(range(1, 173)) <= set(rows)
    assert "docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html" in load("xid")["source"]
    gone = rows[46]
    assert gone["name"] == "GPU stopped processing" and gone["mnemonic"] == "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR"
    assert gone["nvidia_action"] == "RESET_GPU" and gone["action"] == "reset_gpu" and gone["action_source"] == "nvidia"
    assert xid_entry(46).action == "reset_gpu" and xid_entry(41).action == "restart_app"  # a copy engine exception
    assert xid_entry(14).action == "none" and xid_entry(1).action == "investigate"  # IGNORE; CONTACT_SUPPORT


def test_every_xid_action_says_whose_it_is():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from gen_failure_tables import NVIDIA_ACTIONS
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    for row in load("xid")["entries"]:
        assert row["action_source"] in ("nvidia", "gpubot"), row
        if row["action_source"] == "nvidia":
            assert NVIDIA_ACTIONS[row["nvidia_action"]] == row["action"] and row["action_reason"] is None, row
        else:
            assert row["action_reason"] and row["action_reason"].strip(), row
            assert NVIDIA_ACTIONS.get(row["nvidia_action"] or "") != row["action"], row
    sources = {row["xid"]: row["action_source"] for row in load("xid")["entries"]}
    assert sources[79] == sources[48] == sources[63] == "gpubot" and sources[94] == sources[119] == "nvidia"


def test_application_xids_stay_the_applications():
    for xid in (13, 31, 43, 45, 68, 109):
        assert xid_entry(xid).action in ("restart_app", "none"), xid
    assert _xid_signal(43).code == "training.code_error"
    assert _xid_signal(109).severity == "warning"


# --- NCCL WARN formats of every source file ----------------------------------------------------------

def test_nccl_warnings_come_from_every_source_file():
    nccl = json.loads((ROOT / "scripts" / "gpu_failures" / "upstream" / "nccl.json").read_text())
    for path in ("src/enqueue.cc", "src/graph/tuning.cc", "src/graph/topo.cc", "src/misc/argcheck.cc",
                 "src/misc/cudawrap.cc", "src/transport/nvls.cc", "src/group.cc"):
        assert path in nccl["files"], path
    assert len(load("nccl_warnings")["entries"]) >= 700


def test_new_nccl_formats_are_classed():
    old = nccl_warning("Error : no algorithm/protocol available")
    new = nccl_warning("Error : no algorithm/protocol available for function AllReduce with datatype ncclBfloat16. "
                       "NCCL_ALGO was set to NVLS.")
    newest = nccl_warning("No algorithm/protocol available for function AllGather with datatype ncclInt8. "
                          "NCCL_PROTO was set to LL128.")
    assert old.code == new.code == newest.code == "nccl.network_config"
    assert nccl_warning("ncclBroadcast : invalid root 9 (root should be in the 0..7 range)").code == "nccl.invalid_usage"
    assert nccl_warning("CUDA Driver version found is 12020. Minimum requirement is 12030").code == "training.gpu_not_visible"
    assert nccl_warning("NCCL version mismatch with remote peer ip-10-0-0-7 (local: 22809, remote 22707)").code == \
        "nccl.invalid_usage"
    p2p = next(r for r in load("nccl_warnings")["entries"] if r["name"].startswith("P2P is disabled between NVLINK"))
    assert nccl_warning(p2p["sample"]).klass == "hardware"
    windows = next(r for r in load("nccl_warnings")["entries"] if r["name"].startswith("SHM legacy: failed to restore"))
    assert windows["code"] is None and "Windows" in windows["meaning"]
