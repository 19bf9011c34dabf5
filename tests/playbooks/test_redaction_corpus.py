"""Every form of secret in the corpus (tests/playbooks/secret_forms.py, values drawn afresh each run)
is masked by ``redact``, by ``gpubot explain`` and in the JSON it prints; ordinary evidence, with its
ids, digests and names drawn at random too, reads as it did; no input costs more than linear time."""
from __future__ import annotations

import json
import secrets
import time
import uuid

import pytest

from playbooks.explain import explain_text
from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.redact import MASK, redact, redact_diagnosis
from tests.playbooks.secret_forms import BASE64, HEX, forms, mixed, pem_body

FORMS = forms()
OOM = ("[rank{n}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total "
       "capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 38.42 "
       "GiB memory in use. case-{n}: {line}")
EVIDENCE_PER_LOG = 5  # explain quotes the first five distinct lines of a finding (playbooks/explain.py)


def leaked(secret: str, shown: str) -> bool:
    """Whether any eight characters running of the secret (all of it, if shorter) are shown: a rule
    that masks only a token's prefix ("ghp") must not pass."""
    width = min(8, len(secret))
    return any(secret[i:i + width] in shown for i in range(len(secret) - width + 1))


def test_the_corpus_is_broad():
    assert len(FORMS) >= 40 and len({f.name for f in FORMS}) == len(FORMS)


@pytest.mark.parametrize("form", FORMS, ids=[f.name for f in FORMS])
def test_the_secret_is_masked_and_the_line_still_reads(form):
    out = redact(form.text)
    assert MASK in out, form.text
    for secret in form.secrets:
        assert not leaked(secret, out), (form.text, out)
    assert form.text.startswith(out.split(MASK)[0])  # what precedes the first mask is as it was
    if not form.name.endswith("alone"):
        assert out.replace(MASK, "").strip(), "something around the secret still reads"
    assert redact(out) == out  # redacting again changes nothing (the store redacts what the engine did)


@pytest.mark.parametrize("form", [f for f in FORMS if "pem" in f.name or "openssh" in f.name],
                         ids=lambda f: f.name)
def test_a_key_split_over_evidence_lines_is_masked_line_by_line(form):
    """Each line of a key as its own evidence line (the way a finding quotes a log), in one diagnosis."""
    lines = [line for line in json.loads(form.text)["private_key"].splitlines()] if form.text.startswith("{") \
        else form.text.splitlines()
    finding = Finding(code="x", severity="error", confidence="high", title="t", detail="d",
                      evidence=[Evidence(source=f"log line {n}", text=line) for n, line in enumerate(lines)])
    dumped = repr(redact_diagnosis(Diagnosis(target=Target("pod", "p"), summary="s", findings=[finding])).to_dict())
    for secret in form.secrets:
        if len(secret) >= 42:  # body lines of 40 characters or more; a shorter one is masked beside others
            assert not leaked(secret, dumped)


def _low_entropy_last_line() -> str:
    """A key's last line (40 random base64 characters and padding) of the one draw in fifty whose
    entropy is under the high-entropy family's limit: only the key-line rules can mask it."""
    from playbooks.redaction.entropy import BASE64_LIMIT
    from playbooks.redaction.gitleaks import shannon

    while True:
        line = mixed(BASE64, 40) + "=="
        if shannon(line) <= BASE64_LIMIT:
            return line


@pytest.mark.parametrize("shape", ["alone", "before its end marker", "after a body line"])
def test_a_key_line_the_entropy_family_misses_is_masked(shape):
    last, full = _low_entropy_last_line(), pem_body()[0]
    text = {"alone": last, "before its end marker": f"{last}\n-----END RSA PRIVATE KEY-----",
            "after a body line": f"{full}\n{last}\n"}[shape]
    out = redact(text)
    assert not leaked(last, out) and not leaked(full, out), out
    assert redact(f"case-1: {last}") == f"case-1: {last}", "inside a longer line it is not a key's line"


def test_upstreams_short_last_line_is_masked_without_its_begin_line():
    """gitleaks' own private-key example (cmd/generate/config/rules/privatekey.go), quoted without its
    BEGIN line: its last line has 24 characters, under any entropy limit."""
    tail = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\nKs14IReLcYgADhoXk56ZzXI=\n-----END PRIVATE KEY-----"
    assert redact(tail) == "[REDACTED]\n[REDACTED]\n-----END PRIVATE KEY-----"


def _chunks(lines: list[str]) -> list[list[str]]:
    return [lines[i:i + EVIDENCE_PER_LOG] for i in range(0, len(lines), EVIDENCE_PER_LOG)]


ONE_LINE = [f for f in FORMS if f.one_line]


@pytest.mark.parametrize("chunk", _chunks([f.text for f in ONE_LINE]), ids=lambda c: f"{len(c)} lines")
def test_explain_quotes_the_lines_without_their_secrets(chunk, tmp_path, cli):
    start = [f.text for f in ONE_LINE].index(chunk[0])
    log = "\n".join(OOM.format(n=start + i, line=line) for i, line in enumerate(chunk))
    secrets_here = [s for f in ONE_LINE[start:start + len(chunk)] for s in f.secrets]
    path = tmp_path / "pasted.log"
    path.write_text(log)
    as_json = cli("explain", str(path), "--json")
    as_text = cli("explain", str(path))
    assert as_json.code == 0 and as_text.code == 0, as_json.err
    diagnosis = json.loads(as_json.out)
    quoted = [e["text"] for f in diagnosis["findings"] for e in f["evidence"]]
    for i in range(len(chunk)):
        assert any(f"case-{start + i}:" in q for q in quoted), "every secret-carrying line is quoted"
    direct = repr(explain_text(log).to_dict())
    for secret in secrets_here:
        for shown in (as_json.out, as_json.err, as_text.out, as_text.err, direct):
            assert not leaked(secret, shown), secret


def _ordinary_lines() -> list[str]:
    uid, digest, commit = uuid.uuid4(), secrets.token_hex(32), secrets.token_hex(20)
    instance, eni, ami = f"i-{secrets.token_hex(9)[:17]}", f"eni-{secrets.token_hex(9)[:17]}", f"ami-{secrets.token_hex(9)[:17]}"
    claim = f"gpu-{''.join(secrets.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"
    return [
        f"llama-3-8b-node-0-0:194:712 [0] NCCL INFO comm 0x{secrets.token_hex(4)} rank 0 nranks 16 cudaDev 0 busId 101c0 - Init COMPLETE",
        "NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
        "NCCL WARN NET/OFI Request 0x7f3c completed with error. RC: 21. Error: 12 (Cannot allocate memory). Completed length: 0",
        f'{{"level":"INFO","time":"2026-01-01T12:00:02.400Z","logger":"controller","message":"launched nodeclaim",'
        f'"commit":"{commit[:7]}","NodeClaim":{{"name":"{claim}"}},"provider-id":"aws:///us-west-2a/{instance}",'
        f'"instance-type":"p4d.24xlarge","zone":"us-west-2a","capacity-type":"on-demand"}}',
        f"Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu) {claim}",
        "0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/12 nodes are available: 12 No preemption victims found for incoming pod.",
        f"Pod ml/llama-3-8b-0 uid {uid} on node ip-10-0-1-7.us-west-2.compute.internal ({instance})",
        f"Successfully pulled image \"123456789012.dkr.ecr.us-west-2.amazonaws.com/train@sha256:{digest}\" in 18.2s",
        f"containerID: containerd://{secrets.token_hex(32)}",
        f"imageID: nvcr.io/nvidia/pytorch@sha256:{digest}",
        f"Attached {eni} to {instance} from {ami} in subnet-{secrets.token_hex(9)[:17]}",
        f"loading file tokenizer.json from cache at /root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3-8B/snapshots/{commit}/tokenizer.json",
        f"[  1234.567890] NVRM: Xid (PCI:0000:{secrets.token_hex(1)}:00): 79, pid=1234, GPU has fallen off the bus.",
        "tokenizer_path=/models/llama-3-8b max_tokens=2048 num_tokens: 1024 tokens/s: 3512.4",
        "MountVolume.SetUp failed for volume \"registry-creds\" : secret \"gpu-pull-secret\" not found",
        "secretName: gpu-pull-secret  secretKeyRef: {name: hf, key: token}  passwordFile: /etc/pg/pass",
        "PWD=/workspace/train OLDPWD=/workspace HOME=/root",
        "password: null  token: <none>  auth: true  apiKey: ${OPENAI_API_KEY}",
        "Basic authentication failed for the registry; check the pull secret",
        f"trace_id={secrets.token_hex(16)} span_id={secrets.token_hex(8)} request-id: {uuid.uuid4()}",
        f"git checkout {commit} && pip install -e .",
        "Disrupting Node: Underutilized/Delete (NodeClaim=gpu-v278f, NodePool=gpu, instance-type=p5.48xlarge)",
        "[2026-01-01 12:00:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] step=1200, skipped=0, lr=[1.9e-05]",
        "https://karpenter.sh/docs/troubleshooting/#node-launch-failures and http://10.0.1.7:8080/metrics?who=a@b",
        *_names_and_ids(),
    ]


def _names_and_ids() -> list[str]:
    """Ids, digests and names that are not secrets, one per line as a describe or a list prints them;
    several are hex or base64 of a key's length, and gitleaks' keywords (key, token, auth, sk) stand
    beside some."""
    def name(n: int) -> str:
        return "".join(secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))

    instances = [f"i-{secrets.token_hex(9)[:17]}" for _ in range(3)]
    return [
        " ".join(instances),
        instances[0],
        f"sha256:{secrets.token_hex(32)}",
        secrets.token_hex(32),
        str(uuid.uuid4()),
        f"uid: {uuid.uuid4()}",
        f"gpu-{name(5)}",
        f"NodeClaim default-{name(5)} launched in us-west-2b, providerID aws:///us-west-2b/{instances[1]}",
        f"karpenter-{name(10)}-{name(5)}",
        f"kube-system/aws-node-{name(5)}",
        f"llama-3-8b-worker-{secrets.randbelow(64)}",
        f"pytorchjob.kubeflow.org/llama-3-8b-{name(5)} created",
        f"image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/train@sha256:{secrets.token_hex(32)}",
        f"Node ip-10-0-{secrets.randbelow(255)}-{secrets.randbelow(255)}.us-west-2.compute.internal ready, key sk-{name(4)}",
        "node.kubernetes.io/instance-type=p5.48xlarge karpenter.sh/nodepool=gpu-ondemand",
        f"secret \"hf-token\" of type Opaque, key token, resourceVersion {secrets.randbelow(10**8)}",
        "checkpoints/Llama3Run7/step12000/optimizer/state01",
        "mysql -h db.internal -u trainer -p < schema.sql",
        "mkdir -p /workspace/ckpt && ssh -p2222 bastion",
        "login failed: password incorrect for machine learning user",
    ]


def test_a_list_of_names_and_ids_reads_as_it_did():
    """The same lines as one text, as a pasted describe or list: no line is taken for a key's body."""
    text = "\n".join(_names_and_ids())
    assert redact(text) == text


_ORDINARY = _ordinary_lines()


# Ids by position: the lines hold values drawn per run, and pytest-xdist's workers must collect the same ids.
@pytest.mark.parametrize("line", _ORDINARY, ids=[f"line {i}" for i in range(len(_ORDINARY))])
def test_ordinary_evidence_reads_as_it_did(line):
    assert redact(line) == line


@pytest.mark.parametrize("line", [
    "password=" * 7000,
    "a:" * 32000,
    "x://" + "u:" * 16000 + "@",
    "-----BEGIN PRIVATE KEY-----" + "A" * 65000,
    "eyJ" + "a" * 65000,
    "Authorization: Bearer " * 2900,
    '\\"password\\": \\"' * 4000,
    "--password " * 5900,
    "".join(secrets.choice(HEX + "GHIJKLMNOP+/") for _ in range(65000)),
    "xoxb-1-" * 9000,
    "secret: '" * 7000,
    "AccountKey=" * 5900,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0." * 1800,
], ids=["keys", "colons", "userinfo", "pem", "base64 json", "headers", "escaped json", "flags", "one token",
        "slack heads", "open quotes", "azure keys", "jwt heads"])
def test_a_pathological_line_costs_linear_time(line):
    started = time.perf_counter()
    redact(line)
    assert time.perf_counter() - started < 2.0
