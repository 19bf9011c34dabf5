"""/metrics on the probe port of `gpubot serve` as deployed (a diagnosis worker process, the fake Slack,
the simulated cluster): a command's counts, its diagnosis, its findings and its Slack calls, counted in
the worker, are served by the serving process; label values come from known sets only."""
from __future__ import annotations

import json
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from bot import metrics
from playbooks.codes import CODE_SET
from tests.fakes.slack_api import FakeSlack
from tests.slack.serve_process import serving


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = answer.read().decode()
    samples: dict[tuple[str, tuple], float] = {}
    for family in text_string_to_metric_families(text):  # parses: the exposition is valid
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in samples, f"{key} exposed twice"
            samples[key] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_command_diagnosed_in_a_worker_is_counted_on_the_serving_process_metrics(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path, GPUBOT_WORKERS="1") as bot:
        before = scrape(bot.probe_port)
        status, _, _ = bot.send.slash_command("why-pending pytorch-dist-job -n t5-fsdp",
                                              response_url=slack.response_url())
        assert status == 200
        slack.wait_for("chat.update", timeout=60,
                       predicate=lambda c: "karpenter.provisioning" in json.dumps(c.args.get("blocks")))
        bot.send.slash_command("frobnicate", response_url=slack.response_url())  # answered in the ack
        updates = len(slack.calls("chat.update"))
        deadline = time.monotonic() + 20
        while True:  # the worker counts a command when its listener returns, just after its last call
            after = scrape(bot.probe_port)
            counted = (value(after, "gpubot_commands_total", kind="invalid", outcome="ok") >= 1
                       and value(after, "gpubot_commands_total", kind="why-pending", outcome="ok") >= 1)
            if counted or time.monotonic() > deadline:  # on a loaded machine the worker's count comes later
                break
            time.sleep(0.1)
    assert value(before, "gpubot_commands_total", kind="why-pending", outcome="ok") == 0
    assert value(after, "gpubot_commands_total", kind="why-pending", outcome="ok") == 1
    assert value(after, "gpubot_commands_total", kind="invalid", outcome="ok") == 1
    assert value(after, "gpubot_diagnosis_duration_seconds_count", outcome="ok") == 1
    assert 0 < value(after, "gpubot_diagnosis_duration_seconds_sum", outcome="ok") < 60
    assert value(after, "gpubot_diagnosis_duration_seconds_bucket", outcome="ok", le="+Inf") == 1
    findings = {dict(labels)["code"]: n for (name, labels), n in after.items() if name == "gpubot_findings_total"}
    assert findings and set(findings) <= CODE_SET | {"other"}
    assert any(code.startswith("karpenter.") for code in findings)
    assert value(after, "gpubot_slack_api_calls_total", method="chat.update", status="200") == updates
    assert value(after, "gpubot_slack_api_calls_total", method="chat.postMessage", status="200") >= 1
    assert value(after, "gpubot_ready") == 1 and value(after, "gpubot_workers_alive") == 1
    assert value(after, "gpubot_work_queue_depth") == 0
    assert value(after, "gpubot_leader") == 0  # no alert channel: no election, no sweeps


def test_label_values_come_from_known_sets_never_from_requests():
    assert metrics.slack_method("chat.update") == "chat.update"
    assert metrics.slack_method("chat.update<script>") == "other"
    assert metrics.finding_code("karpenter.insufficient_capacity") == "karpenter.insufficient_capacity"
    assert metrics.finding_code("llama-3-8b") == "other"
    assert metrics.command_kind("why-pending") == "why-pending" and metrics.command_kind("rm -rf") == "other"
    assert [metrics.http_status(s) for s in (200, 429, 404, 503, None, 999)] == \
        ["200", "429", "4xx", "5xx", "connection", "other"]


def test_slack_calls_are_counted_by_method_and_status_429_included():
    from bot.delivery.pacer import Pacer
    from bot.slack_client import make_web_client
    from tests.fakes import workspace as ws

    def count(status: str) -> float:
        return metrics.REGISTRY.get_sample_value("gpubot_slack_api_calls_total",
                                                 {"method": "chat.postMessage", "status": status}) or 0.0

    ok, limited = count("200"), count("429")
    with FakeSlack() as slack:
        slack.inject("chat.postMessage", error="ratelimited", status=429, headers={"Retry-After": "0"}, times=1)
        client = make_web_client(token=ws.BOT_TOKEN, base_url=slack.url, pacer=Pacer())
        client.chat_postMessage(channel="C0TRAIN", text="hello")  # refused once, then delivered
    assert (count("200") - ok, count("429") - limited) == (1, 1)


def test_database_errors_are_counted():
    from bot.store import StoreUnavailable, make_engine
    from bot.store.tx import Transactions
    from sqlalchemy import text
    from tests.fakes.ports import refused_port

    def count(kind: str) -> float:
        return metrics.REGISTRY.get_sample_value("gpubot_database_errors_total", {"kind": kind}) or 0.0

    before = count("transient"), count("unavailable")
    with refused_port() as port:
        engine = make_engine(f"postgresql+psycopg://gpubot@127.0.0.1:{port}/gpubot")
        try:
            Transactions(engine, attempts=2, backoff=0.01).core(lambda c: c.execute(text("SELECT 1")))
        except StoreUnavailable:
            pass
        else:
            raise AssertionError("a refused database answered")
        finally:
            engine.dispose()
    assert (count("transient") - before[0], count("unavailable") - before[1]) == (1, 1)
