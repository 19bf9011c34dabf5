"""`gpubot diagnose --json`, its terminal output and `gpubot explain` on inputs full of secrets print none
of them: a pod whose environment and log carry credentials, diagnosed through the simulated cluster.
End to end through Slack, no Web API call and no text column of the incident store holds one either."""
from __future__ import annotations

import contextlib
import json
import textwrap

import pytest

from bot.payloads import ACTION_RESOLVE
from playbooks.redact import MASK
from tests.conftest import SIM_ENV, point_cli_at
from tests.playbooks.secret_forms import forms
from tests.playbooks.test_redaction import SECRETS
from tests.playbooks.test_redaction_corpus import leaked

LOG = "\n".join(line for line, _ in SECRETS if "\n" not in line) + "\n" + textwrap.dedent("""\
    [rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 77.98 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. HF_TOKEN=hf_LeakedInTheSameLine0123456789abcdefg
    """)

LEAKED = "hf_LeakedInTheSameLine0123456789abcdefg"  # on the very line quoted as evidence

SCENARIO = textwrap.dedent("""\
    name: leaky-trainer
    source: https://github.com/kubernetes-sigs/karpenter
    description: a trainer whose env and log carry credentials dies of CUDA OOM
    base: karpenter
    region: us-west-2
    target: pod/leaky-trainer-0
    namespace: ml-leaky
    expect: {first_finding: training.cuda_oom}
    objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: leaky-trainer-0, namespace: ml-leaky}
      spec:
        containers:
        - name: trainer
          image: public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312
          env:
          - {name: AWS_SECRET_ACCESS_KEY, value: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY}
          - {name: HF_TOKEN, value: hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789}
          resources: {limits: {nvidia.com/gpu: '1'}, requests: {nvidia.com/gpu: '1'}}
        restartPolicy: Never
      status:
        phase: Failed
        containerStatuses:
        - name: trainer
          image: public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312
          imageID: ''
          ready: false
          restartCount: 0
          state: {terminated: {exitCode: 1, reason: Error, startedAt: '-10m', finishedAt: '-2m'}}
    logs:
    - {namespace: ml-leaky, pod: leaky-trainer-0, container: trainer, previous: false, file: leaky.log}
    """)


def test_diagnose_prints_no_secret(tmp_path, monkeypatch, cli):
    from sim.serve import start_sim

    (tmp_path / "leaky-trainer.yaml").write_text(SCENARIO)
    (tmp_path / "leaky.log").write_text(LOG)
    with start_sim(directory=tmp_path, scenarios=["leaky-trainer"]) as sim:
        monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
        for key, value in SIM_ENV.items():
            monkeypatch.setenv(key, value)
        as_json = cli("diagnose", "pod/leaky-trainer-0", "-n", "ml-leaky", "--json")
        as_text = cli("diagnose", "pod/leaky-trainer-0", "-n", "ml-leaky")
    assert as_json.code == 0 and as_text.code == 0, as_json.err
    diagnosis = json.loads(as_json.out)
    assert diagnosis["findings"][0]["code"] == "training.cuda_oom"
    assert any("[REDACTED]" in e["text"] for f in diagnosis["findings"] for e in f["evidence"]), \
        "the log lines around the secrets are still quoted"
    for _, secret in SECRETS + [("", LEAKED)]:
        for part in secret.splitlines():
            assert part not in as_json.out + as_json.err + as_text.out + as_text.err, part


def test_explain_prints_no_secret(tmp_path, cli):
    path = tmp_path / "pasted.log"
    path.write_text(LOG)
    result = cli("explain", str(path), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"][0]["code"] == "training.cuda_oom"
    for _, secret in SECRETS + [("", LEAKED)]:
        for part in secret.splitlines():
            assert part not in result.out + result.err, part


# -- the corpus, end to end ---------------------------------------------------------------------------
# Every form of tests/playbooks/secret_forms.py (values drawn afresh each run), each on its own line of
# a trainer's log behind a CUDA OOM that gpubot quotes as evidence, five lines to a pod (a finding
# quotes the first five distinct lines). A PEM key's lines each stand alone, as a finding quotes them.
# The pods' environment carries the one-line secrets as well.

CORPUS = forms()
OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total "
       "capacity of 79.11 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 77.98 GiB "
       "memory in use. case-{n}: {line}")


def _evidence_lines() -> list[tuple[str, tuple[str, ...]]]:
    """(line as the log holds it, the secrets it carries)."""
    out = []
    for form in CORPUS:
        if form.one_line:
            out.append((form.text, form.secrets))
            continue
        for line in form.text.splitlines():
            carried = tuple(s for s in form.secrets if s in line and len(s) == 64)  # whole PEM body lines
            if carried:
                out.append((line, carried))
    return out


LINES = _evidence_lines()
PODS = [LINES[i:i + 5] for i in range(0, len(LINES), 5)]
ALL_SECRETS = [s for f in CORPUS for s in f.secrets]
NOTE = "rotated every credential below, then restarted the job:\n" + "\n".join(f.text for f in CORPUS)


def _pod(k: int, lines) -> dict:
    env = [{"name": f"SECRET_{k}_{i}", "value": secret} for i, (_, carried) in enumerate(lines) for secret in carried[:1]]
    status = {"name": "trainer", "image": "public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312",
              "imageID": "", "ready": False, "restartCount": 0,
              "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "-10m", "finishedAt": "-2m"}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"leaky-corpus-{k}", "namespace": "ml-leaky"},
            "spec": {"containers": [{"name": "trainer", "image": status["image"], "env": env,
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}],
                     "restartPolicy": "Never"},
            "status": {"phase": "Failed", "containerStatuses": [status]}}


def _write_corpus_scenario(directory) -> None:
    import yaml

    scenario = {"name": "leaky-corpus", "source": "https://github.com/kubernetes-sigs/karpenter",
                "description": "trainers whose env and logs carry every form of secret die of CUDA OOM",
                "base": "karpenter", "region": "us-west-2", "target": "pod/leaky-corpus-0", "namespace": "ml-leaky",
                "expect": {"first_finding": "training.cuda_oom"},
                "objects": [_pod(k, lines) for k, lines in enumerate(PODS)],
                "logs": [{"namespace": "ml-leaky", "pod": f"leaky-corpus-{k}", "container": "trainer", "previous": False,
                          "file": f"leaky-corpus-{k}.log"} for k in range(len(PODS))]}
    (directory / "leaky-corpus.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
    for k, lines in enumerate(PODS):
        log = "\n".join(OOM.format(n=5 * k + i, line=line) for i, (line, _) in enumerate(lines))
        (directory / f"leaky-corpus-{k}.log").write_text(log + "\n")


@pytest.fixture(scope="module")
def corpus_sim(tmp_path_factory):
    from sim.serve import start_sim

    directory = tmp_path_factory.mktemp("corpus")
    _write_corpus_scenario(directory)
    with start_sim(directory=directory, scenarios=["leaky-corpus"]) as sim:
        yield sim


def test_diagnose_json_quotes_every_form_without_its_secret(corpus_sim, monkeypatch, cli):
    point_cli_at(corpus_sim, monkeypatch)
    for k, lines in enumerate(PODS):
        result = cli("diagnose", f"pod/leaky-corpus-{k}", "-n", "ml-leaky", "--json")
        assert result.code == 0, result.err
        quoted = " ".join(e["text"] for f in json.loads(result.out)["findings"] for e in f["evidence"])
        for i, (_, carried) in enumerate(lines):
            assert f"case-{5 * k + i}:" in quoted, "the line carrying the secret is quoted"
            for secret in carried:
                assert not leaked(secret, result.out + result.err), secret


def test_no_slack_call_and_no_stored_text_holds_a_secret(corpus_sim, tmp_path):
    """Diagnoses in a channel, a log pasted into the bot's thread and a Resolve note holding every
    form: no Web API call carries a secret, nor does any text column of any table."""
    from sqlalchemy import String, Text, inspect, select

    from bot.store import make_engine
    from bot.store.models import Base

    with corpus_bot(corpus_sim, tmp_path) as (bot, database):
        first = None
        for k in range(len(PODS)):
            pod = f"leaky-corpus-{k}"
            bot.command(f"diagnose pod/{pod} -n ml-leaky")
            final = bot.slack.wait_for("chat.update", timeout=30, predicate=lambda c, pod=pod: (
                "training.cuda_oom" in json.dumps(c.args.get("blocks")) and pod in json.dumps(c.args)))[-1]
            first = first or final
        [resolve] = [e for b in first.args["blocks"] if b["type"] == "actions" for e in b["elements"]
                     if e["action_id"] == ACTION_RESOLVE]
        bot.send.block_action(ACTION_RESOLVE, resolve["value"], message_ts=first.args["ts"], channel=first.args["channel"])
        form = bot.slack.wait_for("views.open")[0].args["view"]
        values = {"resolution": {"text": {"type": "plain_text_input", "value": NOTE}}}
        bot.send.view_submission(form["callback_id"], values, form["private_metadata"])
        bot.slack.wait_for("chat.postMessage", predicate=lambda c: "resolved by <@U0ALICE>" in c.args.get("text", ""))

        bot.send.app_mention("<@U0BOT> diagnose pod/leaky-corpus-0 -n ml-leaky", ts="1767225605.000100")
        bot.slack.wait_for("chat.update", timeout=30, predicate=lambda c: c.args.get("ts") and "training.cuda_oom"
                           in json.dumps(c.args.get("blocks")) and c.args.get("channel") == "C0TRAIN")
        paste = "```\n" + "\n".join(OOM.format(n=900 + i, line=line) for i, (line, _) in enumerate(LINES[-5:])) + "\n```"
        bot.send.thread_message(paste, thread_ts="1767225605.000100", ts="1767225606.000100")
        bot.slack.wait_for("chat.postMessage", timeout=30, predicate=lambda c: c.args.get("thread_ts") == "1767225605.000100"
                           and "training.cuda_oom" in json.dumps(c.args.get("blocks")))
        bot.settle()
        sent = [json.dumps(c.args) for c in bot.slack.calls()]

    assert any(MASK in s for s in sent) and any("case-" in s for s in sent), "the secret-carrying lines were shown"
    for secret in ALL_SECRETS:
        for call in sent:
            assert not leaked(secret, call), (secret, call[:300])

    engine = make_engine(database)
    try:
        with engine.connect() as conn:
            stored = {table.name: [row for row in conn.execute(select(table))] for table in Base.metadata.sorted_tables}
            texts = {(t.name, c.name) for t in Base.metadata.sorted_tables for c in t.columns
                     if isinstance(c.type, (String, Text)) or isinstance(getattr(c.type, "impl", None), Text)}
            assert {"resolution", "detail", "evidence", "summary"} <= {c for _, c in texts}
            assert set(inspect(conn).get_table_names()) >= set(stored)
    finally:
        engine.dispose()
    dumped = json.dumps({t: [[str(v) for v in row] for row in rows] for t, rows in stored.items()})
    for secret in ALL_SECRETS:
        assert not leaked(secret, dumped), secret
    [incident] = [r for r in stored["incidents"] if r.resolution]
    assert incident.resolution.startswith("rotated every credential below") and MASK in incident.resolution
    assert any(r.kind == "resolved" and MASK in r.detail for r in stored["timeline"])
    assert any(MASK in r.evidence for r in stored["findings"])


@contextlib.contextmanager
def corpus_bot(sim, directory):
    """gpubot in HTTP mode over the corpus cluster, with fake Slack and a SQLite store, as
    tests/slack/conftest.py builds it."""
    from bot.app import create_app
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from tests.fakes import workspace as ws
    from tests.fakes.signing import SlackRequests
    from tests.fakes.slack_api import FakeSlack
    from tests.slack.conftest import OPEN_POLICY, Bot, bot_env, migrated_sqlite, roomy_pacer, write_policy

    database = migrated_sqlite(directory / "gpubot.db")
    with pytest.MonkeyPatch.context() as mp, FakeSlack() as slack:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)
        app = create_app(load_settings(bot_env(sim, slack, GPUBOT_DATABASE_URL=database,
                                               GPUBOT_POLICY=write_policy(directory, OPEN_POLICY))), pacer=roomy_pacer())
        server = SlackHttpServer(app, host="127.0.0.1", port=0).start()
        try:
            yield Bot(slack, SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET), server, app), database
        finally:
            server.stop()
