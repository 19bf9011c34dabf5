"""`gpubot explain` on pasted text: seed logs, standard input, and a 50 MB log."""
from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "text"


def test_explain_file(cli):
    result = cli("explain", str(FIXTURES / "seed000_cuda_oom.log"), "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    assert diagnosis["target"]["kind"] == "text"
    first = diagnosis["findings"][0]
    assert first["code"] == "training.cuda_oom"
    assert "39.49 GiB" in first["detail"] or "39.5" in first["detail"]


def test_explain_stdin(cli):
    data = (FIXTURES / "seed000_ofi_4126.log").read_bytes()
    result = cli("explain", "-", stdin=data)
    assert result.code == 0, result.err
    assert "nccl.peer_unresponsive" in result.out.split("2. ")[0]


def test_explain_benign_text_finds_nothing(cli):
    result = cli("explain", "-", stdin=b"NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA\n" * 50)
    assert result.code == 0
    assert "No known problem signatures found in 50 lines." in result.out


def test_explain_50_mb_log(tmp_path, cli):
    filler = b"[2026-01-01 12:00:00] step 1200 loss 1.734 lr 2e-05 NCCL INFO Channel 00/0 via NET/Libfabric/0/GDRDMA\n"
    oom = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of "
           b"39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 8.38 GiB memory in use.\n")
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        for _ in range(50 * 1024 * 1024 // len(filler)):
            handle.write(filler)
        handle.write(oom)
    assert path.stat().st_size >= 50 * 1024 * 1024
    result = cli("explain", str(path), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"][0]["code"] == "training.cuda_oom"
