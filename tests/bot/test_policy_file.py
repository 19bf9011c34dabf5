"""The policy file: a good file gives the exact typed policy, each mistake names its line and says what
to write instead, and `gpubot policy check` says so with exit status 0 or 2."""
from __future__ import annotations

import textwrap
from datetime import timedelta

import pytest

from bot.policy import (
    Approvers, Grant, Policy, PolicyError, RemediationPolicy, RemediationScope, load_policy, parse_policy,
)
from tests.conftest import run_cli

TEAM = textwrap.dedent("""\
    # A typical team: its own channel, an on-call channel, admins.
    channels:                      # Slack channel id -> what commands run there may read
      C0123ABCD: {clusters: [prod-use1], namespaces: [ml-training, "llm-*"], default_namespace: ml-training}
      C0ONCALL1:
        clusters: [prod-use1, "staging-*"]
        namespaces: ["*"]
      "*": {clusters: [prod-use1], namespaces: []}        # every other channel; omit to deny
    users:                         # grants added to the channel's, for a person anywhere (DMs included)
      U0ADMIN: {clusters: ["*"], namespaces: ["*"]}
      U0MLLEAD: {clusters: [prod-use1], namespaces: [research]}
    approvers:                     # who may approve remediations
      users: [U0ONCALL1]
      usergroups: [S0GPUONCALL]
    remediations:
      self_approval: false
      expiry: 2h
      two_person: true
      annotate-do-not-disrupt: {namespaces: ["*"]}
      nodepool-consolidation: {nodepools: ["gpu-*"]}
      cordon-gpu-node: {nodes: ["ip-10-0-*.ec2.internal"]}
    """)


def write(tmp_path, text: str, name: str = "policy.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_good_file_gives_the_exact_typed_policy(tmp_path):
    path = write(tmp_path, TEAM)
    assert load_policy(path) == Policy(
        channels={
            "C0123ABCD": Grant(clusters=("prod-use1",), namespaces=("ml-training", "llm-*"),
                               default_namespace="ml-training"),
            "C0ONCALL1": Grant(clusters=("prod-use1", "staging-*"), namespaces=("*",)),
            "*": Grant(clusters=("prod-use1",), namespaces=()),
        },
        users={"U0ADMIN": Grant(clusters=("*",), namespaces=("*",)),
               "U0MLLEAD": Grant(clusters=("prod-use1",), namespaces=("research",))},
        approvers=Approvers(users=frozenset({"U0ONCALL1"}), usergroups=frozenset({"S0GPUONCALL"})),
        remediations=RemediationPolicy(
            enabled=True, self_approval=False, expiry=timedelta(hours=2), two_person=True,
            scopes={"annotate-do-not-disrupt": RemediationScope(namespaces=("*",)),
                    "nodepool-consolidation": RemediationScope(nodepools=("gpu-*",)),
                    "cordon-gpu-node": RemediationScope(nodes=("ip-10-0-*.ec2.internal",))}),
        source=str(path),
    )


def test_sections_may_be_left_out():
    policy = parse_policy("channels:\n  C0123ABCD: {clusters: [prod]}\nusers:\n", source="p.yaml")
    assert policy.users == {} and policy.approvers == Approvers()
    assert policy.channels == {"C0123ABCD": Grant(clusters=("prod",))}
    # A file enables remediations, but a kind it does not name is allowed nowhere.
    assert policy.remediations == RemediationPolicy(enabled=True)
    assert not policy.remediations.allows("annotate-do-not-disrupt", namespace="ml")
    assert policy.enforced and policy.source == "p.yaml"


def test_access_from_the_file():
    policy = parse_policy(TEAM, source="team.yaml")
    team = policy.access(user="U0SOMEONE", channel="C0123ABCD")
    assert team.may_read("prod-use1", "llm-finetune") and team.may_read("prod-use1", "ml-training")
    assert not team.may_read("prod-use1", "kube-system") and not team.may_read("staging-1", None)
    assert team.default_namespace == "ml-training"
    assert team.refusal("prod-use1", "payments") == "namespace payments is not open to this channel"
    # Any other channel: the "*" grant, cluster-scoped objects only.
    other = policy.access(user="U0SOMEONE", channel="C0RANDOM1")
    assert other.may_read("prod-use1", None) and not other.may_read("prod-use1", "ml-training")
    assert not other.may_cluster("staging-1")
    # A person's grant is added to the channel's.
    lead = policy.access(user="U0MLLEAD", channel="C0123ABCD")
    assert lead.may_read("prod-use1", "research") and lead.may_read("prod-use1", "llm-eval")
    assert not policy.access(user="U0SOMEONE", channel="C0123ABCD").may_read("prod-use1", "research")
    # In a DM the channel id is the DM's, so the "*" grant plus the person's own apply.
    admin_dm = policy.access(user="U0ADMIN", channel="D0DIRECT1")
    assert admin_dm.may_read("any-cluster", "kube-system") and admin_dm.where == "you"
    lead_dm = policy.access(user="U0MLLEAD", channel="D0DIRECT1")
    assert lead_dm.may_read("prod-use1", "research") and not lead_dm.may_read("prod-use1", "ml-training")
    assert lead_dm.refusal("prod-use1", "ml-training") == "namespace ml-training is not open to you"
    assert policy.may_approve("U0ONCALL1") and policy.may_approve("U0X1", usergroups=frozenset({"S0GPUONCALL"}))
    assert not policy.may_approve("U0ADMIN")
    assert policy.remediations.allows("nodepool-consolidation", nodepool="gpu-a100")
    assert not policy.remediations.allows("nodepool-consolidation", nodepool="cpu-general")


def test_without_a_star_entry_other_channels_read_nothing():
    policy = parse_policy("channels:\n  C0123ABCD: {clusters: [prod], namespaces: [ml]}\n", source="p.yaml")
    elsewhere = policy.access(user="U0SOMEONE", channel="C0OTHER11")
    assert not elsewhere.may_cluster("prod")
    assert elsewhere.refusal("prod", "ml") == "cluster prod is not open to this channel"


GRANT = "{clusters: [prod], namespaces: [ml]}"
# (file text, line of the mistake, words the reason must contain)
BAD = [
    pytest.param("channels:\n  C0123ABCD: {clusters: [prod]\n", 2, ["not valid YAML", "close the bracket"],
                 id="yaml-unclosed"),
    pytest.param("channels:\n  C0123ABCD: {clusters: [prod]}\n  C0456EFGH\nusers: {}\n", 3,
                 ["not valid YAML", "write key: value"], id="yaml-no-colon"),
    pytest.param("channels:\n  C0123ABCD: {clusters: [prod]}\n x: 1\n", 3, ["indent this line"],
                 id="yaml-indent"),
    pytest.param("channels: {}\n---\nusers: {}\n", 2, ["keep one document"], id="yaml-two-documents"),
    pytest.param("channels:\n  *: {clusters: [prod]}\n", 2, ['write "*" in quotes'], id="bare-star"),
    pytest.param("channels:\n\tC0123ABCD: {clusters: [prod]}\n", 2, ["spaces, not tabs"], id="tab"),
    pytest.param("", 1, ["the policy file is empty"], id="empty"),
    pytest.param("# only a comment\n\n", 1, ["the policy file is empty"], id="comments-only"),
    pytest.param("- channels\n", 1, ["must be a mapping"], id="top-level-list"),
    pytest.param(f"channels:\n  C0123ABCD: {GRANT}\nchanels: {{}}\n", 3,
                 ["unknown key 'chanels'", "channels, users, approvers, remediations"], id="typo-section"),
    pytest.param("apiVersion: v1\nkind: ConfigMap\n", 1, ["Kubernetes manifest", "policy.yaml"], id="manifest"),
    pytest.param(f"channels:\n  C0123ABCD: {GRANT}\n  C0456EFGH: {GRANT}\n  C0123ABCD: {GRANT}\n", 4,
                 ["C0123ABCD appears twice", "first on line 2"], id="duplicate-channel"),
    pytest.param("users:\n  U0ADMIN: {clusters: [a], clusters: [b]}\n", 2, ["clusters appears twice"],
                 id="duplicate-grant-key"),
    pytest.param(f"channels:\n  '#ml-training': {GRANT}\n", 2, ["not a channel id", "not its name"],
                 id="channel-name"),
    pytest.param(f"users:\n  alice: {GRANT}\n", 2, ["not a user id", "member id"], id="user-name"),
    pytest.param("approvers:\n  usergroups: ['@gpu-oncall']\n", 2, ["not a user group id", "not its @handle"],
                 id="usergroup-handle"),
    pytest.param("approvers:\n  users: [U0ONCALL1]\n  groups: [S0ONCALL]\n", 3,
                 ["unknown key 'groups'", "users, usergroups"], id="approvers-key"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: [prod]\n    namespace: [ml]\n", 4,
                 ["unknown key 'namespace'", "clusters, namespaces, default_namespace"], id="grant-key-typo"),
    pytest.param("channels:\n  C0123ABCD: {namespaces: [ml]}\n", 2, ["names no clusters", "clusters: [NAME]"],
                 id="grant-without-clusters"),
    pytest.param("channels:\n  C0123ABCD:\n", 2, ["has no grant", "{clusters: []} to deny"], id="grant-null"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: prod\n", 3,
                 ["clusters must be a list", "write [prod] instead of prod"], id="bare-string"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: ['*']\n    namespaces: '*'\n", 4,
                 ['write ["*"] instead'], id="bare-star-string"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: [prod]\n    namespaces:\n      - ml\n      - ML_Team\n",
                 6, ["'ML_Team' is not a namespace pattern"], id="namespace-pattern"),
    pytest.param("channels:\n  C0123ABCD: {clusters: ['prod use1']}\n", 2, ["not a cluster pattern"],
                 id="cluster-pattern"),
    pytest.param("channels:\n  C0123ABCD: {clusters: [true]}\n", 2, ["expected a name", "in quotes"],
                 id="cluster-bool"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: [prod]\n    namespaces: ['llm-*']\n"
                 "    default_namespace: 'llm-*'\n", 5, ["is not a namespace", "without *"],
                 id="default-namespace-pattern"),
    pytest.param("channels:\n  C0123ABCD:\n    clusters: [prod]\n    namespaces: [ml, 'llm-*']\n"
                 "    default_namespace: research\n", 5, ["not among this grant's namespaces", "[ml, llm-*]"],
                 id="default-namespace-outside"),
    pytest.param("remediations:\n  expiry: 30\n", 2, ["like 45s, 30m, 2h or 1d"], id="expiry-no-unit"),
    pytest.param("remediations:\n  expiry: 8d\n", 2, ["at most 7d"], id="expiry-too-long"),
    pytest.param("remediations:\n  expiry: 0m\n", 2, ["more than 0"], id="expiry-zero"),
    pytest.param("remediations:\n  self_approval: 'no'\n", 2, ["true or false"], id="bool-quoted"),
    pytest.param("remediations:\n  two_person: true\n  reboot-node: {nodes: ['*']}\n", 3,
                 ["unknown key 'reboot-node'", "annotate-do-not-disrupt, nodepool-consolidation, cordon-gpu-node"],
                 id="unknown-kind"),
    pytest.param("remediations:\n  nodepool-consolidation: {namespaces: ['*']}\n", 2,
                 ["scoped by nodepools", "{nodepools: [\"*\"]}"], id="wrong-scope-key"),
    pytest.param("remediations:\n  cordon-gpu-node:\n", 2, ["says nowhere"], id="kind-null"),
    pytest.param("remediations:\n  cordon-gpu-node: {nodes: ['GPU_Node']}\n", 2, ["not a node or NodePool pattern"],
                 id="node-pattern"),
    pytest.param("alerts:\n  route:\n    - {channel: C0ALERTS}\n", 2, ["unknown key 'route'", "routes"],
                 id="alerts-key"),
    pytest.param("alerts:\n  routes: {channel: C0ALERTS}\n", 2, ["alerts.routes must be a list"],
                 id="alerts-routes-mapping"),
    pytest.param("alerts:\n  routes:\n    - {channel: C0ALERTS}\n    - {clusters: [prod]}\n", 4,
                 ["alerts.routes[1] names no channel", "channel: C0123ABCD"], id="route-without-channel"),
    pytest.param("alerts:\n  routes:\n    - channel: '#gpu-alerts'\n", 3, ["not a channel id", "not its #name"],
                 id="route-channel-name"),
    pytest.param("alerts:\n  routes:\n    - {channel: C0ALERTS, min_severity: high}\n", 3,
                 ["'high' is not a severity", "critical, error, warning, info"], id="route-severity"),
    pytest.param("alerts:\n  routes:\n    - channel: C0ALERTS\n      namespace: [ml]\n", 4,
                 ["unknown key 'namespace'", "channel, clusters, namespaces, nodepools, min_severity"],
                 id="route-key-typo"),
    pytest.param("alerts:\n  routes:\n    - {channel: C0ALERTS, nodepools: gpu}\n", 3,
                 ["nodepools must be a list", "write [gpu] instead of gpu"], id="route-bare-string"),
]


@pytest.mark.parametrize("text, line, words", BAD)
def test_each_mistake_names_its_line_and_what_to_write(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert "\n" not in message
    for word in words:
        assert word in message, message
    assert caught.value.exit_code == 2


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(PolicyError, match=r"nope\.yaml: no such policy file: point GPUBOT_POLICY"):
        load_policy(tmp_path / "nope.yaml")
    with pytest.raises(PolicyError, match="is a directory"):
        load_policy(tmp_path)


def test_a_file_not_in_utf8_names_the_path_and_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("channels:\n  # équipe ML\n".encode("latin-1"))
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}:2: the policy file is not UTF-8 text: save it as UTF-8"


def test_policy_check_describes_a_good_file(tmp_path):
    path = write(tmp_path, TEAM)
    result = run_cli("policy", "check", str(path))
    assert result.code == 0, result.err
    assert result.out.strip() == (
        f"policy {path}: 2 channels, a \"*\" grant for every other channel, 2 user grants, 2 approvers, "
        "remediations: annotate-do-not-disrupt, nodepool-consolidation, cordon-gpu-node")


def test_policy_check_fails_with_one_line_and_exit_2(tmp_path):
    path = write(tmp_path, "channels:\n  C0123ABCD:\n    clusters: prod\n")
    result = run_cli("policy", "check", str(path))
    assert result.code == 2 and result.out == ""
    assert result.err == f"gpubot: {path}:3: channels.C0123ABCD.clusters must be a list: write [prod] instead of prod\n"
    assert run_cli("policy", "check", str(tmp_path / "missing.yaml")).code == 2
    assert run_cli("policy", "check").code == 2


def test_serve_stops_on_an_invalid_policy_before_listening(tmp_path, monkeypatch):
    path = write(tmp_path, "channels:\n  C0123ABCD: {clusters: [prod], namespaces: ML}\n")
    monkeypatch.setenv("GPUBOT_POLICY", str(path))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s" * 32)
    monkeypatch.setenv("GPUBOT_HTTP_PORT", "0")
    result = run_cli("serve")
    assert result.code == 2
    assert result.err == (f"gpubot: {path}:2: channels.C0123ABCD.namespaces must be a list: "
                          "write [ML] instead of ML\n")


def test_the_readme_example_is_a_valid_policy():
    from tests.conftest import REPO

    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Policy file\n", 1)[1].split("\n## ", 1)[0]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    policy = parse_policy(example, source="README.md")
    assert policy.access(user="U0SOMEONE", channel="C04MLTRAIN1").default_namespace == "ml-training"
    assert set(policy.remediations.scopes) == {"annotate-do-not-disrupt", "nodepool-consolidation", "cordon-gpu-node"}


def test_approvers_channel():
    from bot.policy.load import PolicyError, parse_policy

    policy = parse_policy("approvers:\n  users: [U0ONCALL1]\n  channel: C0GPUONCALL\n", source="p.yaml")
    assert policy.approvers.channel == "C0GPUONCALL"
    for bad in ("'#gpu-oncall'", "D0DIRECT"):
        with pytest.raises(PolicyError, match=r"^p\.yaml:3: approvers\.channel: .* is not a channel id"):
            parse_policy(f"approvers:\n  users: [U0ONCALL1]\n  channel: {bad}\n", source="p.yaml")


def test_alert_routes():
    from bot.policy.model import AlertPolicy, AlertRoute

    text = ("alerts:\n  routes:\n    - {channel: C0LLMTEAM, clusters: [prod], namespaces: [\"llm-*\"], "
            "min_severity: warning}\n    - {channel: C0GPUPOOL, nodepools: [\"gpu-*\"]}\n")
    policy = parse_policy(text, source="p.yaml")
    assert policy.alerts == AlertPolicy(routes=(
        AlertRoute(channel="C0LLMTEAM", clusters=("prod",), namespaces=("llm-*",), min_severity="warning"),
        AlertRoute(channel="C0GPUPOOL", nodepools=("gpu-*",))))
    route = policy.alerts.channel
    assert route(cluster="prod", namespace="llm-a", nodepool="gpu-h100", severity="error") == "C0LLMTEAM"
    assert route(cluster="prod", namespace="llm-a", nodepool="gpu-h100", severity="info") == "C0GPUPOOL"
    assert route(cluster="prod", namespace=None, nodepool=None, severity="critical") is None
    # Files without the section keep working: no routes, GPUBOT_ALERT_CHANNEL decides.
    assert parse_policy(TEAM, source="team.yaml").alerts == AlertPolicy()
    assert parse_policy("alerts:\n", source="p.yaml").alerts == AlertPolicy()
