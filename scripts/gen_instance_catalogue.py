"""Write bot/gateway/data/instance_types.json: every GPU and accelerated EC2 instance type, from the
instance-type data moto bundles (DescribeInstanceTypes answers captured from AWS).

    .venv/bin/python scripts/gen_instance_catalogue.py [--out PATH]

Run it again after upgrading moto; the JSON's header names the moto version and the date. Families
people run that moto's data lacks are listed in the output's "missing" field and printed: their
numbers are left out rather than guessed.
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
from importlib import metadata, resources
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "bot" / "gateway" / "data" / "instance_types.json"

# Accelerated families in use for training and inference; the catalogue holds whatever moto has, and
# these are checked so that a family missing from moto's data is said out loud.
EXPECTED_FAMILIES = (
    "g4dn", "g4ad", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "g7", "g7e",
    "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200",
    "trn1", "trn1n", "trn2", "trn2u", "inf1", "inf2", "dl1", "dl2q",
)

# Only what bot.gateway.catalogue.parse_instance_type reads, in DescribeInstanceTypes' own shape, so
# that the embedded catalogue and live EC2 answers go through one parser.
KEEP = ("InstanceType", "VCpuInfo", "MemoryInfo", "ProcessorInfo", "GpuInfo", "NeuronInfo", "InstanceStorageInfo",
        "InferenceAcceleratorInfo", "NetworkInfo", "SupportedUsageClasses", "Hypervisor")
KEEP_NETWORK = ("EfaSupported", "EfaInfo", "MaximumNetworkInterfaces", "Ipv4AddressesPerInterface",
                "DefaultNetworkCardIndex", "NetworkCards", "MaximumNetworkCards")
KEEP_CARD = ("NetworkCardIndex", "MaximumNetworkInterfaces")
KEEP_PROCESSOR = ("SupportedArchitectures", "Manufacturer")


def accelerated(raw: dict) -> bool:
    return bool((raw.get("GpuInfo") or {}).get("Gpus") or (raw.get("NeuronInfo") or {}).get("NeuronDevices")
                or (raw.get("InferenceAcceleratorInfo") or {}).get("Accelerators"))


def trimmed(raw: dict) -> dict:
    out = {k: raw[k] for k in KEEP if k in raw}
    net = raw.get("NetworkInfo") or {}
    out["NetworkInfo"] = {k: net[k] for k in KEEP_NETWORK if k in net}
    if "NetworkCards" in net:
        out["NetworkInfo"]["NetworkCards"] = [{k: c[k] for k in KEEP_CARD if k in c} for c in net["NetworkCards"]]
    if "ProcessorInfo" in raw:
        out["ProcessorInfo"] = {k: raw["ProcessorInfo"][k] for k in KEEP_PROCESSOR if k in raw["ProcessorInfo"]}
    return out


def moto_instance_types() -> dict[str, dict]:
    resource = resources.files("moto.ec2") / "resources" / "instance_types.json.gz"
    with resource.open("rb") as fh:
        return json.load(gzip.open(fh))


def build(*, today: dt.date | None = None) -> dict:
    data = moto_instance_types()
    types = {name: trimmed(raw) for name, raw in sorted(data.items()) if accelerated(raw)}
    families = {name.split(".", 1)[0] for name in types}
    known = {name.split(".", 1)[0] for name in data}
    missing = {f: ("in moto's data without GPU or accelerator facts" if f in known else "not in moto's data")
               for f in EXPECTED_FAMILIES if f not in families}
    return {
        "source": "moto",
        "moto_version": metadata.version("moto"),
        "generated": (today or dt.date.today()).isoformat(),
        "generator": "scripts/gen_instance_catalogue.py",
        "scope": "instance types with GPUs, AWS Neuron devices or inference accelerators",
        # family -> why it is not here; its numbers are left out rather than guessed
        "missing": dict(sorted(missing.items())),
        "instance_types": types,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    catalogue = build()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(catalogue, indent=1, sort_keys=True) + "\n")
    families = sorted({n.split(".", 1)[0] for n in catalogue["instance_types"]})
    print(f"{len(catalogue['instance_types'])} instance types in {len(families)} families from moto "
          f"{catalogue['moto_version']} -> {args.out}")
    print("families: " + ", ".join(families))
    if catalogue["missing"]:
        print("left out, not guessed: " + "; ".join(f"{f} ({why})" for f, why in catalogue["missing"].items()),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
