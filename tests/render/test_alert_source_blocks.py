"""An incoming alert's labels and annotations as Block Kit: compact, escaped, within Slack's limits
whatever the alert holds."""
from __future__ import annotations

from bot.alerts.alertmanager import parse_webhook
from bot.render.blocks import check, limits
from bot.render.blocks.alert_source import alert_source_blocks
from tests.bot.alertmanager_payloads import alert, encode, fixture, webhook
from tests.fakes.block_kit_limits import problems
from tests.render.helpers import alltext

HOSTILE = "<@U123ABC> <!channel> <https://evil.example|click me> & @here"


def rendered(raw: dict) -> list[dict]:
    [incoming] = parse_webhook(encode(webhook(raw))).alerts
    blocks = alert_source_blocks(incoming)
    assert check(blocks) == [] and problems(blocks) == []
    return blocks


def test_a_dcgm_xid_alert():
    incoming = parse_webhook(fixture("dcgm_xid_firing.json")).alerts[0]
    blocks = alert_source_blocks(incoming)
    assert check(blocks) == [] and problems(blocks) == []
    origin, text, fields = blocks
    line = origin["elements"][0]["text"]
    assert "Alertmanager `GPUXidError` firing" in line and "severity critical" in line
    assert "since 2026-05-14 09:12 UTC" in line
    # The generator URL, & escaped, labelled with its host.
    assert "g0.tab=1|kube-prometheus-stack-prometheus.monitoring:9090>" in line and "&amp;g0.tab" in line
    assert text["text"]["text"].startswith("*GPU 0 on ip-10-0-12-34.us-west-2.compute.internal reported Xid 79*\n")
    shown = [f["text"] for f in fields["fields"]]
    assert "*gpu*\n0" in shown and "*modelName*\nNVIDIA A100-SXM4-40GB" in shown
    assert not any(f.startswith(("*alertname*", "*severity*")) for f in shown)  # told in the context line


def test_a_resolved_alert_says_when_it_ended():
    incoming = parse_webhook(fixture("dcgm_xid_partly_resolved.json")).alerts[0]
    line = alert_source_blocks(incoming)[0]["elements"][0]["text"]
    assert "resolved" in line and "ended 2026-05-14 09:41 UTC" in line


def test_runbook_links_and_the_rest_of_the_annotations():
    crash = parse_webhook(fixture("kube_prometheus_firing.json")).alerts[0]
    blocks = alert_source_blocks(crash)
    assert check(blocks) == []
    more = blocks[-1]["elements"][0]["text"]
    url = "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping"
    assert more == f"runbook_url: <{url}|{url}>"
    assert "&quot;" not in alltext(blocks) and '(reason: "CrashLoopBackOff")' in alltext(blocks)


def test_hostile_text_never_becomes_a_mention_or_a_link():
    blocks = rendered(alert({"node": "n1", "team": HOSTILE},
                            annotations={"summary": HOSTILE, "description": HOSTILE, "note": HOSTILE,
                                         "runbook_url": "javascript:alert(1)"},
                            generatorURL="https://evil.example/x|click me"))
    text = alltext(blocks)
    assert "<@U123ABC>" not in text and "<!channel>" not in text and "<https://evil" not in text
    assert "&lt;@U123ABC&gt;" in text
    assert "<javascript" not in text and "|click me>" not in text


def test_an_alert_holding_everything_stays_within_limits():
    # Every part at its limit: long names and values, links as long as are shown whole.
    labels = {f"label_{i:02}_" + "n" * 100: "v" * 5000 for i in range(40)}
    annotations = {f"link_{i}_" + "k" * 100: "https://runbooks.example/" + "y" * 270 for i in range(8)}
    annotations |= {"summary": "s" * 5000, "description": "d" * 5000, "huge_link": "https://x.example/" + "y" * 3000}
    blocks = rendered(alert(labels, annotations=annotations,
                            generatorURL="https://prometheus.example/graph?g0.expr=" + "%28&" * 110))
    assert len(blocks) == 4
    assert limits.text_size(blocks) < 7000
    assert len(blocks[2]["fields"]) == limits.SECTION_FIELDS
    notes = [e["text"] for e in blocks[3]["elements"]]
    assert notes[-2:] == ["6 more annotations not shown", "30 more labels not shown"]
    assert "<https://prometheus.example/graph" in blocks[0]["elements"][0]["text"]
    # A URL too long to show whole is text, never a link cut in half.
    long = rendered(alert({}, generatorURL="https://prometheus.example/" + "z" * 1500))
    assert "<https" not in alltext(long)


def test_an_alert_with_nothing_but_its_name():
    blocks = rendered({"status": "firing", "labels": {"alertname": "Bare"}, "startsAt": "2026-01-01T00:00:00Z"})
    assert len(blocks) == 1 and "`Bare`" in blocks[0]["elements"][0]["text"]
