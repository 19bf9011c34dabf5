"""Issue 8 end to end: what one team may see and do from its channel, and nothing of another's.

Signed requests go to the real Bolt app over HTTP; gpubot answers through the fake Slack Web API,
reads the simulated cluster over HTTP and records incidents on SQLite and on PostgreSQL (every test
runs once per backend). The world is fixtures/policy-world/two-teams.yaml under the policy in
policy_world.py: C0VISION reads vision-train, C0LLM reads llm-*, other channels read nodes and
NodePools only, U0ADMIN reads everything. After every test, nothing gpubot sent holds a secret.
"""
from __future__ import annotations

import json
import re
import time

import pytest
from sqlalchemy import MetaData, select

from bot.payloads import (
    ACTION_ACKNOWLEDGE, ACTION_APPROVAL, ACTION_EVIDENCE, ACTION_RERUN, ACTION_RESOLVE, ACTION_SHARE, META_RESOLVE,
    ApprovalRequest, TargetRef, encode_approval, encode_target,
)
from bot.render.blocks.modal import RESOLVE_CALLBACK_ID
from bot.store import make_engine
from handlers.views import CALLBACK_EXPLAIN
from playbooks.remediations import annotate_do_not_disrupt, nodepool_consolidation
from tests.slack.conftest import opened
from tests.slack.policy_world import (  # noqa: F401 - fixtures
    ADMIN, ALICE, BOB, ELSEWHERE, LLM, OTHER_CONTEXT, SECRETS, UNKNOWN_CONTEXT, VISION, World, dumped, policy_text,
    policy_world, two_teams_sim, world, write_atomically,
)

OOM = "training.cuda_oom"
PODS = ("vit-pretrain-0", "vit-finetune-0", "data-loader-0", "eval-harness-0", "mixtral-sft-0", "qwen-eval-0",
        "gemma-ablation-0")
CLICKED_TS = "1767225699.000900"  # a message the clicks below claim to come from
NOT_OURS = "this button was not sent by gpubot"
ELSEWHERE_POSTED = "this button belongs to another conversation: use it where it was posted"
EXPIRED = "this button has expired: run the command again for a fresh answer"
# Pasted text: a few of the trainer's secrets and its CUDA OOM line, the last two on one line.
LEAKY_LOG = "\n".join([
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SLACK_BOT_TOKEN=xoxb-2716384950-5823916374-q1w2e3r4t5y6u7i8o9p0",
    "connecting to postgresql://trainer:hunter2hunter2@db.internal/metrics",
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of "
    "79.11 GiB of which 1.12 GiB is free. HF_TOKEN=hf_LeakedInTheSameLine0123456789abcdefg",
])


# -- asking and answering ------------------------------------------------------------------------------

def only_private(world: World, *, channel: str, user: str):
    """The whole answer, once gpubot has finished: one private note to ``user`` in ``channel``."""
    world.bot.settle()
    calls = world.slack.calls()
    assert [c.method for c in calls] == ["chat.postEphemeral"], [(c.method, c.args.get("text")) for c in calls]
    assert (calls[0].args["channel"], calls[0].args["user"]) == (channel, user)
    return calls[0]


def private_texts(world: World, *, channel: str, user: str) -> list[str]:
    world.bot.settle()
    calls = world.slack.calls("chat.postEphemeral")
    assert {(c.args["channel"], c.args["user"]) for c in calls} <= {(channel, user)}
    return [c.args["text"] for c in calls]


def diagnosed(world: World, text: str, *, channel: str, user: str, code: str):
    """The final answer to ``/gpu <text>``: the progress message replaced by a diagnosis naming ``code``."""
    def final(c):
        return c.args["channel"] == channel and code in json.dumps(c.args.get("blocks"))

    before = len([c for c in world.slack.calls("chat.update") if final(c)])
    world.bot.command(text, channel_id=channel, user_id=user)
    return world.slack.wait_for("chat.update", count=before + 1, timeout=20, predicate=final)[-1]


def buttons(call, action_id: str) -> list[dict]:
    return [e for b in call.args["blocks"] if b["type"] == "actions" for e in b["elements"] if e["action_id"] == action_id]


def button(call, action_id: str) -> str:
    [found] = buttons(call, action_id)
    return found["value"]


def incident_of(call) -> int:
    return json.loads(opened(button(call, ACTION_RESOLVE)))["incident"]


def click(world: World, action_id: str, value: str, *, channel: str, user: str, ts: str = CLICKED_TS) -> None:
    status, _, _ = world.bot.send.block_action(action_id, value, channel=channel, user=user, message_ts=ts)
    assert status == 200


def refused_click(world: World, action_id: str, value: str, *, channel: str, user: str) -> str:
    world.fresh()
    click(world, action_id, value, channel=channel, user=user)
    return only_private(world, channel=channel, user=user).args["text"]


def incidents(world: World) -> list[dict]:
    engine = make_engine(world.database)
    try:
        meta = MetaData()
        meta.reflect(engine, only=["incidents"])
        with engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(select(meta.tables["incidents"]))]
    finally:
        engine.dispose()


def status_of(world: World, incident_id: int) -> str:
    return next(i["status"] for i in incidents(world) if i["id"] == incident_id)


def listed_ids(blob) -> set[int]:
    return {int(n) for n in re.findall(r"\*#(\d+)\*", json.dumps(blob))}


def mention_reply(world: World, *, channel: str, text: str = "hi") -> str:
    world.fresh()
    world.bot.send.app_mention(f"<@U0BOT> {text}", channel=channel, user=ALICE)
    [reply] = world.slack.wait_for("chat.postMessage", predicate=lambda c: c.args["channel"] == channel)
    return reply.args["text"]


# -- 1. reads refused before anything is read --------------------------------------------------------

def test_a_closed_namespace_is_refused_alike_whether_or_not_the_name_exists(world):
    answers = []
    for name in ("pod/mixtral-sft-0", "pod/no-such-trainer-9", "mixtral-sft-0"):
        world.fresh()
        world.bot.command(f"diagnose {name} -n llm-prod", channel_id=VISION, user_id=ALICE)
        note = only_private(world, channel=VISION, user=ALICE)
        answers.append((note.args["text"], note.args["blocks"]))
        assert world.sim.request_log() == []  # refused before the cluster was asked anything
    assert answers[0][0] == "namespace llm-prod is not open to this channel"
    assert answers[1] == answers[0] and answers[2] == answers[0]


def test_a_closed_cluster_is_refused_alike_whether_or_not_gpubot_knows_it(world):
    answers = []
    for cluster in (OTHER_CONTEXT, UNKNOWN_CONTEXT):
        world.fresh()
        world.bot.command(f"diagnose pod/vit-pretrain-0 -n vision-train --cluster {cluster}", channel_id=VISION,
                          user_id=ALICE)
        note = only_private(world, channel=VISION, user=ALICE)
        assert note.args["text"] == f"cluster {cluster} is not open to this channel"
        answers.append(json.dumps(note.args["blocks"]).replace(cluster, "NAME"))
        assert world.sim.request_log() == []
    assert answers[0] == answers[1]


def test_a_cluster_gpubot_cannot_reach_is_named_without_paths_or_kubeconfig(world):
    world.bot.command(f"diagnose pod/mixtral-sft-0 -n llm-prod --cluster {UNKNOWN_CONTEXT}", channel_id=VISION,
                      user_id=ADMIN)
    world.bot.settle()
    said = dumped(world.slack.calls())
    assert f"cluster {UNKNOWN_CONTEXT} is not set up in gpubot: its operators can find why in gpubot's log" in said
    for needle in (str(world.kubeconfig), str(world.kubeconfig.parent), "kubeconfig", "staging-east.internal",
                   "staging-token", world.sim.url):
        assert needle not in said


# -- 2. no lookup crosses into a closed namespace --------------------------------------------------

def test_a_bare_name_found_only_in_a_closed_namespace_is_not_found(world):
    world.bot.command("diagnose mixtral-sft-0", channel_id=VISION, user_id=ALICE)
    assert private_texts(world, channel=VISION, user=ALICE) == [
        "found no anything named mixtral-sft-0 in namespace vision-train."]
    assert "llm-prod" not in dumped(world.slack.calls())
    log = world.sim.request_log()
    assert any("/namespaces/vision-train/" in r for r in log) and not any("llm-prod" in r for r in log), log


def test_did_you_mean_lists_only_open_namespaces(world):
    world.bot.command("diagnose pod/mixtral-sft-1", channel_id=VISION, user_id=ALICE)
    assert private_texts(world, channel=VISION, user=ALICE) == [
        "found no pod named mixtral-sft-1 in namespace vision-train."]
    said = dumped(world.slack.calls())
    assert "mixtral-sft-0" not in said and "llm-prod" not in said
    world.fresh()  # the suggestions themselves work, within vision-train
    world.bot.command("diagnose pod/vit-pretrain-1", channel_id=VISION, user_id=ALICE)
    assert private_texts(world, channel=VISION, user=ALICE) == [
        "found no pod named vit-pretrain-1 in namespace vision-train. Did you mean: vit-pretrain-0, vit-finetune-0?"]


def test_a_channel_without_namespaces_finds_no_pod_by_bare_name(world):
    world.bot.command("diagnose mixtral-sft-0", channel_id=ELSEWHERE, user_id=ALICE)
    assert private_texts(world, channel=ELSEWHERE, user=ALICE) == [
        "found no anything named mixtral-sft-0 in the namespaces open here."]
    assert "llm-prod" not in dumped(world.slack.calls())


def test_a_name_in_an_open_and_a_closed_namespace_resolves_to_the_open_one(world):
    final = diagnosed(world, "diagnose data-loader-0", channel=VISION, user=ALICE, code="scheduling.")
    assert json.loads(opened(button(final, ACTION_RERUN)))["t"]["ns"] == "vision-train"
    assert "llm-prod" not in dumped(world.slack.calls())
    world.fresh()
    # eval-harness-0 is in vision-train and llm-research: from C0LLM only llm-research is searched, so
    # it resolves there instead of an ambiguity that names vision-train.
    world.bot.command("diagnose eval-harness-0", channel_id=LLM, user_id=BOB)
    world.bot.settle()
    said = dumped(world.slack.calls())
    assert "ambiguous" not in said and "vision-train" not in said
    rerun = [b for c in world.slack.calls("chat.update") for b in buttons(c, ACTION_RERUN)]
    assert {json.loads(opened(b["value"]))["t"]["ns"] for b in rerun} == {"llm-research"}


# -- 3. pending lists --------------------------------------------------------------------------------

def test_a_mention_without_a_job_lists_only_the_channels_pending_jobs(world):
    text = mention_reply(world, channel=VISION)
    prefix = "Which job should I look at? Pending in vision-train: "
    assert text.startswith(prefix) and text.endswith(".")
    assert set(text[len(prefix):-1].split(", ")) == {"pod/vit-finetune-0", "pod/data-loader-0"}
    assert "qwen-eval-0" not in dumped(world.slack.calls())
    # Asked about another team's namespace by name: no list at all.
    assert mention_reply(world, channel=VISION, text="anything pending in namespace llm-prod?") == \
        "Which job should I look at?"
    assert "qwen-eval-0" not in dumped(world.slack.calls())
    assert mention_reply(world, channel=LLM) == "Which job should I look at? Pending in llm-prod: pod/qwen-eval-0."
    # A channel the "*" grant covers reads no namespace: it is told nothing about any pod.
    assert mention_reply(world, channel=ELSEWHERE) == "Which job should I look at?"
    said = dumped(world.slack.calls())
    assert [name for name in PODS if name in said] == []


# -- 4. a person's grant adds to the channel's -------------------------------------------------------

def test_the_admin_reads_another_teams_namespace_from_any_channel_and_a_dm(world):
    diagnosed(world, "diagnose pod/mixtral-sft-0 -n llm-prod", channel=VISION, user=ADMIN, code=OOM)
    world.fresh()
    world.bot.send.direct_message("why is pod/mixtral-sft-0 failing -n llm-prod", channel="D0ADMIN", user=ADMIN)
    world.slack.wait_for("chat.update", timeout=20,
                         predicate=lambda c: c.args["channel"] == "D0ADMIN" and OOM in json.dumps(c.args["blocks"]))
    world.fresh()
    world.bot.send.direct_message("why is pod/mixtral-sft-0 failing -n llm-prod", channel="D0ALICE", user=ALICE)
    assert only_private(world, channel="D0ALICE", user=ALICE).args["text"] == "namespace llm-prod is not open to you"


# -- 5. incidents ------------------------------------------------------------------------------------

def test_incidents_list_detail_and_app_home_show_only_what_the_asker_may_read(world):
    vision = incident_of(diagnosed(world, "diagnose pod/vit-pretrain-0", channel=VISION, user=ALICE, code=OOM))
    llm = incident_of(diagnosed(world, "diagnose pod/mixtral-sft-0", channel=LLM, user=BOB, code=OOM))
    diagnosed(world, "diagnose nodepool/gpu-shared", channel=ELSEWHERE, user=ALICE, code="karpenter.disruption")
    rows = [i for i in incidents(world) if i["status"] != "resolved"]
    assert {i["namespace"] for i in rows} >= {"vision-train", "llm-prod", None}

    world.fresh()
    world.bot.command("incidents", channel_id=VISION, user_id=ALICE)
    [listing] = world.slack.wait_for("chat.postMessage")
    assert listed_ids(listing.args["blocks"]) == {i["id"] for i in rows if i["namespace"] in ("vision-train", None)}
    assert vision in listed_ids(listing.args["blocks"]) and "llm-prod" not in dumped(world.slack.calls())

    answers = []
    for incident_id in (llm, 987654):
        world.fresh()
        world.bot.command(f"incident {incident_id}", channel_id=VISION, user_id=ALICE)
        note = only_private(world, channel=VISION, user=ALICE)
        assert note.args["text"] == f"there is no incident #{incident_id}."
        answers.append(json.dumps(note.args["blocks"]).replace(str(incident_id), "N"))
    assert answers[0] == answers[1]

    homes = {}
    for user in (ALICE, ADMIN):
        world.fresh()
        world.bot.send.event({"type": "app_home_opened", "user": user, "channel": "D0" + user[2:], "tab": "home",
                              "event_ts": "1767225700.000100"})
        [published] = world.slack.wait_for("views.publish")
        homes[user] = published.args["view"]
    # App Home has no channel: Alice gets the "*" grant (nodes and NodePools), nothing of either team.
    assert listed_ids(homes[ALICE]) == {i["id"] for i in rows if i["namespace"] is None}
    assert OOM not in json.dumps(homes[ALICE]) and "llm-prod" not in json.dumps(homes[ALICE])
    assert {vision, llm} <= listed_ids(homes[ADMIN])


# -- 6. secrets ---------------------------------------------------------------------------------------

def test_the_leaky_trainers_diagnosis_quotes_its_evidence_redacted_in_slack_and_the_database(world):
    final = diagnosed(world, "diagnose pod/mixtral-sft-0", channel=LLM, user=BOB, code=OOM)
    [evidence] = [b["value"] for b in buttons(final, ACTION_EVIDENCE) if json.loads(opened(b["value"]))["code"] == OOM]
    click(world, ACTION_EVIDENCE, evidence, channel=LLM, user=BOB, ts=final.args["ts"])
    [posted] = world.slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == final.args["ts"]
                                    and "CUDA out of memory" in json.dumps(c.args["blocks"]))
    assert "HF_TOKEN=[REDACTED]" in json.dumps(posted.args["blocks"])
    world.bot.command(f"incident {incident_of(final)}", channel_id=LLM, user_id=BOB)
    world.bot.settle()
    assert "mixtral-sft-0" in dumped(world.slack.calls("chat.postMessage"))

    engine = make_engine(world.database)
    try:
        meta = MetaData()
        meta.reflect(engine)
        stored = []
        with engine.connect() as conn:
            for table in meta.sorted_tables:
                stored += [v for row in conn.execute(select(table)) for v in row if isinstance(v, str)]
    finally:
        engine.dispose()
    text = "\n".join(stored)
    assert [s for s in SECRETS if s in text] == []
    assert "HF_TOKEN=[REDACTED]" in text  # the evidence line itself is kept


def test_pasted_text_is_explained_privately_and_shared_without_secrets(world):
    world.bot.command(f"explain {LEAKY_LOG}", channel_id=LLM, user_id=BOB)
    world.bot.settle()
    assert world.slack.calls("chat.postMessage") == [] and world.slack.calls("response_url") == []
    [note] = world.slack.calls("chat.postEphemeral")
    assert (note.args["channel"], note.args["user"]) == (LLM, BOB) and OOM in json.dumps(note.args["blocks"])
    assert [s for s in SECRETS if s in dumped(world.slack.calls())] == []
    click(world, ACTION_SHARE, button(note, ACTION_SHARE), channel=LLM, user=BOB)
    [shared] = world.slack.wait_for("chat.postMessage")
    assert shared.args["channel"] == LLM and shared.args["text"].startswith("Shared by <@U0BOB>")


# -- 7. clicks and forms are untrusted ------------------------------------------------------------------

def _genuine_llm_values(world: World) -> dict[str, str]:
    """One value of each button kind, as gpubot sealed them in C0LLM for Bob."""
    trainer = diagnosed(world, "diagnose pod/mixtral-sft-0", channel=LLM, user=BOB, code=OOM)
    pool = diagnosed(world, "diagnose nodepool/gpu-shared", channel=LLM, user=BOB, code="karpenter.disruption")
    world.bot.command(f"explain {LEAKY_LOG}", channel_id=LLM, user_id=BOB)
    world.bot.settle()
    [note] = world.slack.calls("chat.postEphemeral")
    values = {ACTION_RERUN: button(trainer, ACTION_RERUN), ACTION_EVIDENCE: buttons(trainer, ACTION_EVIDENCE)[0]["value"],
              ACTION_APPROVAL: button(pool, ACTION_APPROVAL), ACTION_RESOLVE: button(trainer, ACTION_RESOLVE),
              ACTION_SHARE: button(note, ACTION_SHARE)}
    ack = buttons(trainer, ACTION_ACKNOWLEDGE) or buttons(pool, ACTION_ACKNOWLEDGE)
    values[ACTION_ACKNOWLEDGE] = ack[0]["value"]
    return values


def test_unsigned_values_in_the_old_format_are_refused(world):
    llm = incident_of(diagnosed(world, "diagnose pod/mixtral-sft-0", channel=LLM, user=BOB, code=OOM))
    before = status_of(world, llm)
    target = {"k": "pod", "n": "mixtral-sft-0", "ns": "llm-prod", "c": world.context}
    forged = [
        (ACTION_RERUN, {"t": target}),
        (ACTION_EVIDENCE, {"t": target, "i": 0, "code": OOM}),
        (ACTION_APPROVAL, {"r": {"kind": "annotate-do-not-disrupt", "target": "pod/llm-prod/mixtral-sft-0",
                                 "params": {"kind": "pod", "namespace": "llm-prod", "name": "mixtral-sft-0"}},
                           "t": target, "code": OOM}),
        (ACTION_APPROVAL, {"r": {"kind": "nodepool-consolidation", "target": "nodepool/batch-a100",
                                 "params": {"nodepool": "batch-a100", "consolidationPolicy": "WhenEmpty",
                                            "consolidateAfter": "10m"}},
                           "t": {"k": "nodepool", "n": "batch-a100", "ns": None, "c": world.context},
                           "code": "karpenter.disruption"}),
        (ACTION_ACKNOWLEDGE, {"incident": llm}),
        (ACTION_RESOLVE, {"incident": llm}),
        (ACTION_SHARE, {"share": "AbCdEfGhIjKlMnOp"}),
    ]
    for action_id, value in forged:
        assert refused_click(world, action_id, json.dumps(value), channel=VISION, user=ALICE) == NOT_OURS, action_id
    assert before != "resolved" and status_of(world, llm) == before


def test_altered_misdirected_and_replayed_values_are_refused(world):
    values = _genuine_llm_values(world)
    for action_id, value in values.items():
        head, payload, mac = value.split(".")
        i = len(payload) // 2
        altered = f"{head}.{payload[:i]}{'A' if payload[i] != 'A' else 'B'}{payload[i + 1:]}.{mac}"
        assert refused_click(world, action_id, altered, channel=LLM, user=BOB) == NOT_OURS, action_id
    kinds = list(values)
    for action_id, other in zip(kinds, kinds[1:] + kinds[:1]):  # each value under another button's action
        assert refused_click(world, other, values[action_id], channel=LLM, user=BOB) == NOT_OURS, (action_id, other)
    for action_id, value in values.items():  # copied from C0LLM into C0VISION
        assert refused_click(world, action_id, value, channel=VISION, user=ALICE) == ELSEWHERE_POSTED, action_id
    # The same value, unaltered, where it was posted: it works.
    world.fresh()
    click(world, ACTION_RERUN, values[ACTION_RERUN], channel=LLM, user=BOB)
    world.slack.wait_for("chat.update", timeout=20, predicate=lambda c: OOM in json.dumps(c.args["blocks"]))


def test_every_click_is_authorised_again_for_the_person_who_clicks(world):
    # The admin diagnoses llm-prod in C0VISION: the buttons are gpubot's, sealed for C0VISION.
    final = diagnosed(world, "diagnose pod/mixtral-sft-0 -n llm-prod", channel=VISION, user=ADMIN, code=OOM)
    incident = incident_of(final)
    before = status_of(world, incident)
    target = TargetRef(kind="pod", name="mixtral-sft-0", namespace="llm-prod", cluster=world.context)
    proposal = ApprovalRequest(remediation=annotate_do_not_disrupt(kind="pod", namespace="llm-prod", name="mixtral-sft-0"),
                               target=target, code=OOM)
    values = {ACTION_RERUN: button(final, ACTION_RERUN), ACTION_EVIDENCE: buttons(final, ACTION_EVIDENCE)[0]["value"],
              ACTION_APPROVAL: world.signer().seal(encode_approval(proposal), action=ACTION_APPROVAL, conversation=VISION),
              ACTION_ACKNOWLEDGE: button(final, ACTION_ACKNOWLEDGE), ACTION_RESOLVE: button(final, ACTION_RESOLVE)}
    closed = "namespace llm-prod is not open to this channel"
    expected = {ACTION_RERUN: closed, ACTION_EVIDENCE: closed, ACTION_APPROVAL: closed,
                ACTION_ACKNOWLEDGE: f"there is no incident #{incident}.", ACTION_RESOLVE: f"there is no incident #{incident}."}
    for action_id, value in values.items():
        assert refused_click(world, action_id, value, channel=VISION, user=ALICE) == expected[action_id], action_id
    assert before == "open" and status_of(world, incident) == before

    # The admin's own clicks on the same buttons work.
    world.fresh()
    click(world, ACTION_RERUN, values[ACTION_RERUN], channel=VISION, user=ADMIN, ts=final.args["ts"])
    world.slack.wait_for("chat.update", timeout=20, predicate=lambda c: OOM in json.dumps(c.args["blocks"]))
    click(world, ACTION_EVIDENCE, values[ACTION_EVIDENCE], channel=VISION, user=ADMIN, ts=final.args["ts"])
    world.slack.wait_for("chat.postMessage", predicate=lambda c: c.args["text"].startswith("Evidence for"))
    click(world, ACTION_APPROVAL, values[ACTION_APPROVAL], channel=VISION, user=ADMIN)
    # Past the policy, the change is planned on the live pod (which has finished: nothing to protect).
    world.slack.wait_for("chat.postEphemeral", predicate=lambda c: c.args["text"].startswith(
                         "annotate-do-not-disrupt cannot be proposed: Pod llm-prod/mixtral-sft-0 has finished"))
    click(world, ACTION_RESOLVE, values[ACTION_RESOLVE], channel=VISION, user=ADMIN)
    world.slack.wait_for("views.open")
    click(world, ACTION_ACKNOWLEDGE, values[ACTION_ACKNOWLEDGE], channel=VISION, user=ADMIN)
    world.slack.wait_for("chat.postMessage", predicate=lambda c: f"#{incident} acknowledged by <@U0ADMIN>" in c.args["text"])
    assert status_of(world, incident) == "acknowledged"


def test_only_changes_the_policy_allows_are_offered_or_accepted(world):
    offered = {}
    for pool in ("gpu-shared", "batch-a100"):
        final = diagnosed(world, f"diagnose nodepool/{pool}", channel=VISION, user=ALICE, code="karpenter.disruption")
        offered[pool] = [(r["kind"], r["target"]) for r in
                         (json.loads(opened(b["value"]))["r"] for b in buttons(final, ACTION_APPROVAL))]
    assert offered == {"gpu-shared": [("nodepool-consolidation", "nodepool/gpu-shared")], "batch-a100": []}

    signer = world.signer()  # gpubot's own key: a valid seal is still authorised again
    pool = TargetRef(kind="nodepool", name="batch-a100", cluster=world.context)
    outside = ApprovalRequest(remediation=nodepool_consolidation(nodepool="batch-a100"), target=pool,
                              code="karpenter.disruption")
    sealed = signer.seal(encode_approval(outside), action=ACTION_APPROVAL, conversation=VISION)
    assert refused_click(world, ACTION_APPROVAL, sealed, channel=VISION, user=ALICE) == \
        "nodepool-consolidation on nodepool/batch-a100 is not allowed by gpubot's policy"
    trainer = TargetRef(kind="pod", name="vit-pretrain-0", namespace="vision-train", cluster=world.context)
    vision = ApprovalRequest(remediation=annotate_do_not_disrupt(kind="pod", namespace="vision-train", name="vit-pretrain-0"),
                             target=trainer, code=OOM)
    sealed = signer.seal(encode_approval(vision), action=ACTION_APPROVAL, conversation=VISION)
    assert refused_click(world, ACTION_APPROVAL, sealed, channel=VISION, user=ALICE) == \
        "annotate-do-not-disrupt on pod/vision-train/vit-pretrain-0 is not allowed by gpubot's policy"


def test_forged_form_metadata_is_refused_or_answered_only_to_the_person(world):
    llm = incident_of(diagnosed(world, "diagnose pod/mixtral-sft-0", channel=LLM, user=BOB, code=OOM))
    before = status_of(world, llm)
    resolution = {"resolution": {"text": {"type": "plain_text_input", "value": "restarted it"}}}
    meta = json.dumps({"incident": llm, "channel": VISION, "thread": None})
    world.fresh()
    world.bot.send.view_submission(RESOLVE_CALLBACK_ID, resolution, meta, user=ALICE)
    assert only_private(world, channel=ALICE, user=ALICE).args["text"].endswith(" was not sent by gpubot")
    world.fresh()
    world.bot.send.view_submission(RESOLVE_CALLBACK_ID, resolution,
                                   world.signer().seal(meta, action=META_RESOLVE, conversation=None), user=ALICE)
    assert only_private(world, channel=VISION, user=ALICE).args["text"] == f"there is no incident #{llm}."
    assert before != "resolved" and status_of(world, llm) == before

    pasted = {"log": {"text": {"type": "plain_text_input", "value": LEAKY_LOG}}}
    world.fresh()
    world.bot.send.view_submission(CALLBACK_EXPLAIN, pasted, json.dumps({"channel": LLM}), user=ALICE)
    world.bot.settle()
    calls = world.slack.calls()
    assert [(c.method, c.args["channel"]) for c in calls] == [("chat.postMessage", ALICE)]  # her DM only
    assert OOM in json.dumps(calls[0].args["blocks"])
    # The form gpubot opened itself answers privately in the channel it was opened from.
    world.fresh()
    world.bot.command("explain", channel_id=VISION, user_id=ALICE)
    [form] = world.slack.wait_for("views.open")
    world.bot.send.view_submission(CALLBACK_EXPLAIN, pasted, form.args["view"]["private_metadata"], user=ALICE)
    world.bot.settle()
    answers = [(c.method, c.args["channel"]) for c in world.slack.calls() if c.method != "views.open"]
    assert answers == [("chat.postEphemeral", VISION)]
    assert OOM in json.dumps(world.slack.calls("chat.postEphemeral")[0].args["blocks"])


def test_expired_buttons_are_refused(world):
    week_ago = world.signer(clock=lambda: time.time() - 8 * 24 * 3600)
    target = TargetRef(kind="pod", name="vit-pretrain-0", namespace="vision-train", cluster=world.context)
    value = encode_target(target)  # one value for every kind: the age is checked before the value is read
    for action_id in (ACTION_RERUN, ACTION_EVIDENCE, ACTION_APPROVAL, ACTION_ACKNOWLEDGE, ACTION_RESOLVE, ACTION_SHARE):
        sealed = week_ago.seal(value, action=action_id, conversation=VISION)
        assert refused_click(world, action_id, sealed, channel=VISION, user=ALICE) == EXPIRED, action_id
    # The same value sealed now is accepted: only its age refused it.
    world.fresh()
    click(world, ACTION_RERUN, world.signer().seal(value, action=ACTION_RERUN, conversation=VISION),
          channel=VISION, user=ALICE)
    world.slack.wait_for("chat.update", timeout=20, predicate=lambda c: OOM in json.dumps(c.args["blocks"]))


# -- 8. the policy file reloads without a restart ------------------------------------------------------

def _asked(world: World) -> str | None:
    """Ask C0VISION about llm-research: the refusal, or None once it is diagnosed."""
    world.fresh()
    world.bot.command("diagnose pod/gemma-ablation-0 -n llm-research", channel_id=VISION, user_id=ALICE)
    world.bot.settle()
    refusals = world.slack.calls("chat.postEphemeral")
    return refusals[0].args["text"] if refusals else None


def _until(world: World, want_refused: bool, *, within: float = 6.0) -> float:
    started = time.monotonic()
    while (_asked(world) is not None) != want_refused:
        assert time.monotonic() - started < within, f"the policy change did not apply within {within}s"
        time.sleep(0.3)
    return time.monotonic() - started


def test_a_changed_policy_file_applies_without_a_restart(world):
    assert _asked(world) == "namespace llm-research is not open to this channel"
    write_atomically(world.policy_path, policy_text(world.context, vision_namespaces=("vision-train", "llm-research")))
    try:
        _until(world, want_refused=False)
        updates = world.slack.calls("chat.update")
        assert updates and "gemma-ablation-0" in json.dumps(updates[-1].args["blocks"])
    finally:
        write_atomically(world.policy_path, policy_text(world.context))
        _until(world, want_refused=True)


# -- an incident's thread ----------------------------------------------------------------------------

def test_a_later_diagnosis_is_not_echoed_into_a_thread_in_a_channel_that_may_not_read_it(world):
    # The admin's diagnosis in C0VISION opens the incident of an llm-prod pod, so its thread is there.
    first = diagnosed(world, "diagnose pod/qwen-eval-0 -n llm-prod", channel=VISION, user=ADMIN, code="scheduling.")
    assert "new incident" in json.dumps(first.args["blocks"])
    world.fresh()
    diagnosed(world, "diagnose pod/qwen-eval-0", channel=LLM, user=BOB, code="scheduling.")
    world.bot.settle()
    into_vision = [c.args["text"] for c in world.slack.calls("chat.postMessage") if c.args["channel"] == VISION]
    assert into_vision == []
