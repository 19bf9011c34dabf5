"""The Prometheus rules we ship, checked by Prometheus' own tool: `promtool check rules` on them and
`promtool test rules` on the unit tests in deploy/prometheus/tests (application Xids never page, a
hardware Xid pages after `for:`, a short provisioning failure never fires).

promtool comes from scripts/fetch-promtool.sh (`make test` runs it). Without promtool these tests fail
under CI=true, and are skipped with the command to run elsewhere."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from playbooks.failures.tables import device_plugin_ignored_xids
from tests.tools import required_tool

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
RULES = PROMETHEUS / "gpubot-rules.yaml"
UNIT_TESTS = sorted((PROMETHEUS / "tests").glob("*.yaml"))
GROUPS_FILE = "gpubot-rules.groups.yaml"  # the name the unit tests' rule_files use


def promtool() -> str:
    return required_tool("promtool", install="run `bash scripts/fetch-promtool.sh`",
                         first=[os.environ.get("GPUBOT_PROMTOOL")])


def groups(doc: dict | None = None) -> dict:
    doc = doc or yaml.safe_load(RULES.read_text())
    return {"groups": doc["spec"]["groups"]}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def unit_test(tmp_path: Path, rules: dict) -> subprocess.CompletedProcess:
    (tmp_path / GROUPS_FILE).write_text(yaml.safe_dump(rules, sort_keys=False))
    copies = []
    for test in UNIT_TESTS:
        shutil.copy(test, tmp_path / test.name)
        copies.append(test.name)
    return run("test", "rules", *copies, cwd=tmp_path)


def test_there_are_unit_tests() -> None:
    assert UNIT_TESTS, "deploy/prometheus/tests has no promtool unit tests"
    for test in UNIT_TESTS:
        assert GROUPS_FILE in yaml.safe_load(test.read_text())["rule_files"]


def test_promtool_check_rules(tmp_path: Path) -> None:
    path = tmp_path / GROUPS_FILE
    path.write_text(yaml.safe_dump(groups(), sort_keys=False))
    done = run("check", "rules", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_unit_tests_pass(tmp_path: Path) -> None:
    done = unit_test(tmp_path, groups())
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_unit_tests_catch_a_rule_that_pages_on_application_xids(tmp_path: Path) -> None:
    """The rule as it was (every Xid pages at once) fails the unit tests: they can tell."""
    doc = yaml.safe_load(RULES.read_text())
    for group in doc["spec"]["groups"]:
        for rule in group["rules"]:
            if rule["alert"] == "GPUXidError":
                rule["expr"] = "max by (node, Hostname, hostname, gpu, UUID, modelName) (DCGM_FI_DEV_XID_ERRORS) > 0"
    done = unit_test(tmp_path, groups(doc))
    assert done.returncode != 0
    assert "application Xids do not page" in done.stdout + done.stderr


def test_every_rule_waits_before_firing() -> None:
    for group in groups()["groups"]:
        for rule in group["rules"]:
            assert rule.get("for"), f"{rule['alert']} has no for: (one scrape would fire it)"


def test_only_a_hardware_xid_pages() -> None:
    critical = {r["alert"] for g in groups()["groups"] for r in g["rules"] if r["labels"]["severity"] == "critical"}
    assert critical == {"GPUXidError"}


def test_the_xids_left_out_are_the_device_plugins() -> None:
    """The rule's application Xids are the catalogue's (NVIDIA's device plugin list), not a copy that drifts."""
    [expr] = [r["expr"] for g in groups()["groups"] for r in g["rules"] if r["alert"] == "GPUXidError"]
    assert {int(x) for x in re.findall(r"!=\s*(\d+)", expr)} == set(device_plugin_ignored_xids())


def test_the_karpenter_group_says_it_cannot_fire_on_auto_mode() -> None:
    text = RULES.read_text()
    assert "EKS Auto Mode" in text and "auto-runtime-monitoring" in text
