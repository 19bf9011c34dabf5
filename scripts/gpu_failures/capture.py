"""Produce real failure output on a machine with a GPU, and upstream's error tables from the libraries
installed there.

    python3 scripts/gpu_failures/capture.py OUTDIR [--only NAME ...]

Writes OUTDIR/outputs/NAME.log (each case's combined stdout and stderr, verbatim), OUTDIR/tables.json
(every cudaError_t and CUresult name and message, read through cudaGetErrorName/cudaGetErrorString and
cuGetErrorName/cuGetErrorString; every ncclResult_t through ncclGetErrorString; versions), and
OUTDIR/headers/ (CUDA's driver_types.h and cuda.h, nccl.h, where present). `import_outputs.py` turns
the outputs into fixtures and `gen_failure_tables.py` the tables into playbooks' data.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import CASES, Case  # noqa: E402

TIMEOUT_S = 90


def argv_for(case: Case, program: Path) -> list[str]:
    if case.launcher == "python":
        return [sys.executable, str(program)]
    if case.launcher == "nvidia-smi":
        return ["nvidia-smi", "-i", "7", "-q"]
    n = case.launcher.split(":")[1]
    base = [sys.executable, "-m", "torch.distributed.run"]
    if not case.launcher_args:
        base.append("--standalone")
    return base + ["--nproc-per-node", n, *case.launcher_args, str(program)]


def run_case(case: Case, workdir: Path, outdir: Path) -> dict:
    program = workdir / f"{case.name}.py"
    program.write_text(case.program.lstrip("\n"))
    env = dict(os.environ, PYTHONUNBUFFERED="1", **case.env)
    argv = argv_for(case, program)
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=workdir, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
        output, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        output, rc = (exc.stdout or b"") + b"\n[capture: timed out]\n", None
    except OSError as exc:
        output, rc = f"[capture: could not start: {exc}]\n".encode(), None
    seconds = round(time.monotonic() - start, 1)
    (outdir / f"{case.name}.log").write_bytes(output)
    shown = [a if a != str(program) else f"{case.name}.py" for a in argv]
    shown[0] = "python3" if shown[0] == sys.executable else shown[0]
    return {"name": case.name, "what": case.what, "argv": shown, "env": case.env, "rc": rc,
            "seconds": seconds, "program": case.program.lstrip("\n")}


def find_lib(patterns: list[str]) -> str | None:
    roots = [os.path.dirname(p) for p in sys.path if p.endswith("site-packages")]
    roots += ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64",
              "/usr/local/nvidia/lib"]
    for pattern in patterns:
        for root in roots:
            hits = sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True))
            if hits:
                return hits[-1]
    return None


def runtime_errors() -> dict:
    path = find_lib(["libcudart.so.*"])
    if not path:
        return {"error": "libcudart not found"}
    lib = ctypes.CDLL(path)
    lib.cudaGetErrorName.restype = ctypes.c_char_p
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    version = ctypes.c_int()
    lib.cudaRuntimeGetVersion(ctypes.byref(version))
    rows = []
    for code in range(0, 1200):
        name = lib.cudaGetErrorName(code).decode()
        if name.startswith("unrecognized"):
            continue
        rows.append({"code": code, "name": name, "message": lib.cudaGetErrorString(code).decode()})
    return {"library": path, "runtime_version": version.value, "errors": rows}


def driver_errors() -> dict:
    path = find_lib(["libcuda.so.1"]) or "libcuda.so.1"
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        return {"error": str(exc)}
    version = ctypes.c_int()
    lib.cuDriverGetVersion(ctypes.byref(version))
    rows = []
    for code in range(0, 1200):
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        if lib.cuGetErrorName(code, ctypes.byref(name)) != 0:
            continue
        lib.cuGetErrorString(code, ctypes.byref(text))
        rows.append({"code": code, "name": name.value.decode(),
                     "message": (text.value or b"").decode()})
    return {"library": path, "driver_version": version.value, "errors": rows}


def nccl_errors() -> dict:
    path = find_lib(["libnccl.so.*"])
    if not path:
        return {"error": "libnccl not found"}
    lib = ctypes.CDLL(path)
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    version = ctypes.c_int()
    lib.ncclGetVersion(ctypes.byref(version))
    rows = [{"code": code, "message": lib.ncclGetErrorString(code).decode()} for code in range(0, 16)]
    return {"library": path, "version": version.value, "results": rows}


def versions() -> dict:
    found: dict[str, str] = {"python": sys.version.split()[0]}
    for module in ("torch", "triton", "cupy", "jax", "transformers", "numpy"):
        try:
            found[module] = __import__(module).__version__
        except Exception as exc:  # a missing package is a fact about the machine, not a failure
            found[module] = f"unavailable: {exc}"
    try:
        import torch
        found["torch.cuda"] = torch.version.cuda
        found["torch.nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        found["gpu"] = torch.cuda.get_device_name(0)
    except Exception as exc:
        found["torch.cuda"] = f"unavailable: {exc}"
    try:
        found["nvidia-smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as exc:
        found["nvidia-smi"] = f"unavailable: {exc}"
    return found


def copy_headers(outdir: Path) -> list[str]:
    wanted = ["driver_types.h", "cuda.h", "nccl.h", "cuda_runtime_api.h"]
    roots = ["/usr/local/cuda/include"] + [p for p in sys.path if p.endswith("site-packages")]
    copied = []
    (outdir / "headers").mkdir(exist_ok=True)
    for name in wanted:
        for root in roots:
            hits = sorted(glob.glob(os.path.join(root, "**", name), recursive=True))
            if hits:
                shutil.copy(hits[-1], outdir / "headers" / name)
                copied.append(hits[-1])
                break
    return copied


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--jobs", type=int, default=6)
    args = parser.parse_args()
    outputs = args.outdir / "outputs"
    outputs.mkdir(parents=True, exist_ok=True)
    cases = [c for c in CASES if not args.only or c.name in args.only]
    tables: dict = {}
    for key, fn in (("versions", versions), ("cuda_runtime", runtime_errors),
                    ("cuda_driver", driver_errors), ("nccl", nccl_errors)):
        try:
            tables[key] = fn()
        except Exception as exc:
            tables[key] = {"error": repr(exc)}
    tables["headers"] = copy_headers(args.outdir)
    (args.outdir / "tables.json").write_text(json.dumps(tables, indent=1))
    print("tables:", {k: (len(v.get("errors", v.get("results", []))) if isinstance(v, dict) else v)
                      for k, v in tables.items()}, flush=True)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, Path(tmp), outputs), cases))
    (args.outdir / "cases.json").write_text(json.dumps(results, indent=1))
    for r in results:
        print(f"{r['name']:32} rc={r['rc']} {r['seconds']}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
