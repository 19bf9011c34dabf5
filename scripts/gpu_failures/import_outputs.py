"""Turn what `capture.py` wrote on a machine with a GPU into fixtures.

    python3 scripts/gpu_failures/import_outputs.py CAPTUREDIR [--dest tests/fixtures/text/gpu]

CAPTUREDIR holds capture.py's outputs/NAME.log, cases.json and tables.json (and, when the operator ran
them beside it, nvidia_smi.txt / nvidia_smi_q.txt from the same machine). Each case becomes DEST/NAME.log:
`# ` lines saying how it was produced (machine and versions, the command with its environment, the case's
one-line "what", the program itself indented), then the output verbatim, temporary paths included (they
are what the program really printed). A case that printed nothing or timed out is no failure output: it is
skipped and listed, so a capture that lost a case says so instead of leaving an empty fixture.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMED_OUT = "[capture: timed out]"
# The healthy nvidia-smi listings taken on the capture machine: benign fixtures beside the failures.
SMI = {"nvidia_smi.txt": ("benign_nvidia_smi_h200.txt", "nvidia-smi"),
       "nvidia_smi_q.txt": ("benign_nvidia_smi_q_h200.txt", "nvidia-smi -q")}


def machine(versions: dict) -> str:
    gpu, _, driver = versions.get("nvidia-smi", "").partition(", ")
    return (f"{gpu or versions.get('gpu', 'unknown GPU')} (driver {driver or 'unknown'}), "
            f"Python {versions.get('python')}, PyTorch {versions.get('torch')} (CUDA {versions.get('torch.cuda')}), "
            f"NCCL {versions.get('torch.nccl')}, Triton {versions.get('triton')}, CuPy {versions.get('cupy')}, "
            f"JAX {versions.get('jax')}")


def command(case: dict) -> str:
    env = [f"{k}={shlex.quote(v)}" for k, v in case["env"].items()]
    return " ".join(env + [shlex.quote(a) for a in case["argv"]])


def header(case: dict, versions: dict) -> str:
    program = case["argv"][-1] if case["argv"][-1].endswith(".py") else None
    lines = [
        f"# Real output, {case['name']}: {case['what']}.",
        f"# Produced by scripts/gpu_failures/capture.py (case {case['name']!r} in cases.py) on {machine(versions)}.",
        f"# Command: {command(case)}    (exit code {case['rc']}, {case['seconds']} s; stdout and stderr together)",
    ]
    if program:
        lines.append(f"# Program ({program}):")
        lines += [f"#     {line}".rstrip() for line in case["program"].splitlines()]
    lines.append("# Output, verbatim:")
    return "\n".join(lines) + "\n"


def skip_reason(output: str, case: dict) -> str | None:
    if not output.strip():
        return "printed nothing"
    if TIMED_OUT in output or case["rc"] is None:
        return "timed out"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("--dest", type=Path, default=ROOT / "tests" / "fixtures" / "text" / "gpu")
    args = parser.parse_args()
    try:
        cases = json.loads((args.capture / "cases.json").read_text())
        versions = json.loads((args.capture / "tables.json").read_text())["versions"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args.capture} is not a capture.py output folder ({exc}); run capture.py OUTDIR first",
              file=sys.stderr)
        return 2
    args.dest.mkdir(parents=True, exist_ok=True)
    written, skipped = [], []
    for case in cases:
        output = (args.capture / "outputs" / f"{case['name']}.log").read_text(errors="replace")
        reason = skip_reason(output, case)
        if reason:
            skipped.append(f"{case['name']} ({reason})")
            continue
        (args.dest / f"{case['name']}.log").write_text(header(case, versions) + output)
        written.append(case["name"])
    for source, (name, argv) in SMI.items():
        path = args.capture / source
        if path.is_file():
            head = (f"# Healthy `{argv}` on the capture machine, {machine(versions)}; taken beside\n"
                    f"# scripts/gpu_failures/capture.py's run, output verbatim. Nothing here is a failure.\n")
            (args.dest / name).write_text(head + path.read_text())
            written.append(name)
    print(f"wrote {len(written)} fixtures to {args.dest}")
    for entry in skipped:
        print(f"skipped {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
