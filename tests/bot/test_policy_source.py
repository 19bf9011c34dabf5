"""The policy in force follows the file: a change is read within one check interval, a broken edit or a
vanished file keeps the policy read before, and a ConfigMap-style symlink swap is noticed."""
from __future__ import annotations

import logging
import os
import threading

import pytest

from bot.policy import Grant, Policy, PolicyError, PolicySource
from bot.settings import load_settings

ML = "channels:\n  C0123ABCD: {clusters: [prod], namespaces: [ml]}\n"
LLM = "channels:\n  C0123ABCD: {clusters: [prod], namespaces: [llm]}\n"
BROKEN = "channels:\n  C0123ABCD: {clusters: prod}\n"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def namespaces(source: PolicySource) -> tuple[str, ...]:
    return source.current().channels["C0123ABCD"].namespaces


def rewrite(path, text: str, *, at: int) -> None:
    """New content with a modification time of its own, as an editor or a ConfigMap update leaves it
    (two writes within one timestamp tick must not look alike to the test by accident)."""
    path.write_text(text)
    os.utime(path, ns=(at * 10**9, at * 10**9))


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "policy.yaml"
    rewrite(path, ML, at=1_700_000_000)
    return path


def test_a_change_is_read_once_the_interval_has_passed(policy_file):
    clock = Clock()
    source = PolicySource(str(policy_file), check_interval=2.0, clock=clock)
    assert namespaces(source) == ("ml",)
    rewrite(policy_file, LLM, at=1_700_000_100)
    clock.now += 1.0
    assert namespaces(source) == ("ml",)  # not yet looked at again
    clock.now += 1.5
    assert namespaces(source) == ("llm",)
    assert source.current().source == str(policy_file) and source.last_error is None


def test_a_broken_edit_keeps_the_policy_and_says_why(policy_file, caplog):
    clock = Clock()
    source = PolicySource(policy_file, clock=clock)
    before = source.current()
    rewrite(policy_file, BROKEN, at=1_700_000_100)
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="gpubot.policy"):
        assert source.current() is before
    expected = (f"{policy_file}:2: channels.C0123ABCD.clusters must be a list: write [prod] instead of prod; "
                "keeping the policy read before")
    assert source.last_error == expected
    assert [r.getMessage() for r in caplog.records] == [f"policy not reloaded: {expected}"]
    assert source.describe().endswith(f"(last change not applied: {expected})")
    # Reported once, not at every check while the file stays broken.
    clock.now += 5
    os.utime(policy_file, ns=(1_700_000_200 * 10**9,) * 2)
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="gpubot.policy"):
        assert source.current() is before
    assert len(caplog.records) == 1
    # Fixed: the new policy is in force and the error is gone.
    rewrite(policy_file, LLM, at=1_700_000_300)
    clock.now += 5
    assert namespaces(source) == ("llm",) and source.last_error is None


def test_a_vanished_file_keeps_the_policy(policy_file, caplog):
    clock = Clock()
    source = PolicySource(policy_file, clock=clock)
    before = source.current()
    policy_file.unlink()
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="gpubot.policy"):
        assert source.current() is before
    assert source.last_error == (f"{policy_file}: cannot read the policy file (No such file or directory); "
                                 "keeping the policy read before")
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="gpubot.policy"):
        assert source.current() is before
    assert len(caplog.records) == 1  # once, not at every check while it is gone
    # Back with the same content: nothing to reload, nothing wrong any more.
    rewrite(policy_file, ML, at=1_700_000_500)
    clock.now += 5
    assert source.current() is before and source.last_error is None


def test_touching_without_a_change_keeps_the_same_object(policy_file):
    clock = Clock()
    source = PolicySource(policy_file, clock=clock)
    before = source.current()
    os.utime(policy_file, ns=(1_700_000_900 * 10**9,) * 2)
    clock.now += 5
    assert source.current() is before


def test_a_configmap_symlink_swap_is_noticed(tmp_path):
    """The kubelet writes a ConfigMap update into a new timestamped directory and swaps ``..data``;
    ``policy.yaml`` is a symlink through ``..data``, so only following the links shows the change."""
    mount = tmp_path / "etc-gpubot"
    mount.mkdir()
    first, second = mount / "..2024_01_01_00_00_00.1", mount / "..2024_01_01_00_01_00.2"
    first.mkdir()
    second.mkdir()
    # Same size and same modification time in both: only the inode tells them apart.
    old_text, new_text = ML.replace("[ml]", "[ml-a]"), ML.replace("[ml]", "[ml-b]")
    for directory, text in ((first, old_text), (second, new_text)):
        rewrite(directory / "policy.yaml", text, at=1_700_000_000)
    (mount / "..data").symlink_to(first.name)
    (mount / "policy.yaml").symlink_to("..data/policy.yaml")
    clock = Clock()
    source = PolicySource(str(mount / "policy.yaml"), clock=clock)
    assert namespaces(source) == ("ml-a",)
    # The kubelet's atomic swap: a new link renamed over the old one.
    (mount / "..data_tmp").symlink_to(second.name)
    os.replace(mount / "..data_tmp", mount / "..data")
    clock.now += 5
    assert namespaces(source) == ("ml-b",)


def test_an_invalid_file_stops_start_up(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(BROKEN)
    with pytest.raises(PolicyError, match=rf"^{path}:2: channels\.C0123ABCD\.clusters must be a list"):
        PolicySource(str(path))
    with pytest.raises(PolicyError, match="no such policy file"):
        PolicySource(str(tmp_path / "absent.yaml"))


def test_without_a_file_everything_is_open_and_said_so():
    source = PolicySource.from_settings(load_settings({}))
    assert source.current() == Policy.open() and not source.current().enforced
    assert source.current().access(user="U0ANY1", channel="C0ANY1").may_read("any", "kube-system")
    assert source.describe() == ("no policy file (GPUBOT_POLICY unset): every channel may read every namespace "
                                 "of every cluster; remediations are disabled")


def test_from_settings_reads_gpubot_policy(policy_file):
    source = PolicySource.from_settings(load_settings({"GPUBOT_POLICY": str(policy_file)}))
    assert source.current().channels == {"C0123ABCD": Grant(clusters=("prod",), namespaces=("ml",))}
    assert source.describe() == (f"policy {policy_file}: 1 channel, every other channel denied, 0 user grants, "
                                 "0 approvers, remediations: none")


def test_threads_see_one_policy_or_the_next_never_a_failure(policy_file):
    clock = Clock()
    source = PolicySource(policy_file, check_interval=0.0, clock=clock)
    seen: set[tuple[str, ...]] = set()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(300):
                seen.add(namespaces(source))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for i in range(20):
        rewrite(policy_file, LLM if i % 2 == 0 else ML, at=1_700_001_000 + i)
    for thread in threads:
        thread.join()
    assert errors == [] and seen <= {("ml",), ("llm",)}
