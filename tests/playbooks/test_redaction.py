"""No secret leaves the redaction step, and the line around it still reads."""
from __future__ import annotations

import pytest

from playbooks.explain import explain_text
from playbooks.redact import MASK, redact

# (line as it appears in a log, an event, an object field or pasted text; the secret in it)
SECRETS = [
    ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ('{"level":"INFO","aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYzzKEY"}', "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzzKEY"),
    ("SLACK_BOT_TOKEN=xoxb-2716384950-5823916374-q1w2e3r4t5y6u7i8o9p0", "xoxb-2716384950-5823916374-q1w2e3r4t5y6u7i8o9p0"),
    ("posting with xoxp-1234567890-0987654321-abcdefABCDEF", "xoxp-1234567890-0987654321-abcdefABCDEF"),
    ("git clone https://ghp_R2d2C3poBB8k2so4ndL1ttl3Bea5tZZ99xyz@github.com/org/repo", "ghp_R2d2C3poBB8k2so4ndL1ttl3Bea5tZZ99xyz"),
    ("huggingface-cli login --token hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("HF_TOKEN: hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210", "hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"),
    ("Authorization: Bearer abc.def-ghi_jkl012345", "abc.def-ghi_jkl012345"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' http://x", "dXNlcjpwYXNzd29yZA=="),
    ("token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLWhlcmUtMTIz expired",
     "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLWhlcmUtMTIz"),
    ("MLFLOW_TRACKING_URI=https://ci-user:s3cr3t-P4ss@mlflow.internal:5000", "s3cr3t-P4ss"),
    ("connecting to postgresql://trainer:hunter2hunter2@db.internal/metrics", "hunter2hunter2"),
    ('db: {"user": "ml", "password": "Tr0ub4dor&3"}', "Tr0ub4dor&3"),
    ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
    ("--hub_token=hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890", "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890"),
    ("secretAccessKey: 9dk3Lm2pQz8vX7cN4bT1yH6uJ0eR5wS2aF3gD8kLm", "9dk3Lm2pQz8vX7cN4bT1yH6uJ0eR5wS2aF3gD8kLm"),
    ("client_secret='c1i3nt-s3cr3t-v4lue'", "c1i3nt-s3cr3t-v4lue"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4f\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx4f"),
    ("OPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwx1234", "sk-proj-Abcdefghijklmnopqrstuvwx1234"),
]


@pytest.mark.parametrize("line,secret", SECRETS, ids=[s[1][:12] for s in SECRETS])
def test_the_secret_is_replaced_and_the_line_still_reads(line, secret):
    out = redact(line)
    assert secret not in out and MASK in out
    assert out.split(MASK)[0] == line.split(secret)[0][: len(out.split(MASK)[0])]  # what precedes stays


@pytest.mark.parametrize("line", [
    "tokenizer_path=/models/llama-3-8b max_tokens=2048 num_tokens: 1024",
    "NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
    "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)",
    "serviceAccountToken: {expirationSeconds: 3607, path: token}",
    "Basic authentication failed for the registry; check the pull secret",
    "password: null",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB.",
])
def test_ordinary_lines_are_left_alone(line):
    assert redact(line) == line


def test_a_pasted_log_full_of_secrets_is_explained_without_them():
    text = "\n".join(line for line, _ in SECRETS) + (
        "\n[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 39.49 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 38.42 "
        "GiB memory in use. HF_TOKEN=hf_LeakedInTheSameLine0123456789abcdefg")
    diagnosis = explain_text(text)
    assert [f.code for f in diagnosis.findings][:1] == ["training.cuda_oom"]
    dumped = repr(diagnosis.to_dict())
    for _, secret in SECRETS + [("", "hf_LeakedInTheSameLine0123456789abcdefg")]:
        assert secret not in dumped
    assert any(MASK in e.text for f in diagnosis.findings for e in f.evidence)
