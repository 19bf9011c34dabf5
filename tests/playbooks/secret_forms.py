"""Lines that carry a secret, in every form gpubot meets them, with values drawn at random per run.

``forms()`` returns (name, text, secrets): ``text`` as it appears in a log, an event, an object field,
a pasted command or a note; ``secrets`` the values that must not survive redaction (a PEM key counts
each body line as a secret of its own, since each may reach us alone). Values come from ``secrets``,
so no rule can pass by knowing a fixed example.
"""
from __future__ import annotations

import base64
import json
import secrets
import string
from dataclasses import dataclass

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Form:
    name: str
    text: str
    secrets: tuple[str, ...]
    # A secret only as a line by itself (a PEM key's short last line): the tests that quote each
    # one-line form inside a longer log line leave it out, since inside one it is not key material.
    whole_line: bool = False

    @property
    def one_line(self) -> bool:
        """A form that stands on one line, and may be quoted inside a longer one."""
        return "\n" not in self.text and not self.whole_line


def draw(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def mixed(alphabet: str, n: int) -> str:
    """A random value holding an upper-case letter, a lower-case letter and a digit (drawn again on the
    rare draw that lacks one: the entropy family leaves such values to the name and shape families)."""
    while True:
        value = draw(alphabet, n)
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value


def password() -> str:
    """A password as people choose them: starts with a letter, has symbols that are not delimiters."""
    return secrets.choice(string.ascii_letters) + mixed(ALNUM + "!#%+-_~*^", 15)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt() -> str:
    header = b64url(json.dumps({"alg": "RS256", "kid": draw(HEX, 8)}).encode())
    payload = b64url(json.dumps({"sub": f"system:serviceaccount:ml:{draw(HEX, 6)}", "exp": 1767225600}).encode())
    return f"{header}.{payload}.{b64url(secrets.token_bytes(64))}"


def pem_body() -> list[str]:
    body = base64.b64encode(secrets.token_bytes(600)).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return [line for line in lines if len(line) == 64] + [mixed(BASE64, 40) + "=="]


def ec_body() -> list[str]:
    """An EC P-256 key's body (121 bytes of DER): two full lines and a last one of 36 characters."""
    body = base64.b64encode(secrets.token_bytes(121)).decode()
    return [body[i:i + 64] for i in range(0, len(body), 64)]


def dockerconfigjson() -> str:
    auth = base64.b64encode(f"robot:{password()}".encode()).decode()
    config = {"auths": {f"{draw(HEX, 6)}.dkr.ecr.us-west-2.amazonaws.com": {"auth": auth}}}
    return base64.b64encode(json.dumps(config).encode()).decode()


def forms() -> list[Form]:
    out: list[Form] = []

    def add(name: str, text: str, *values: str, whole_line: bool = False) -> None:
        out.append(Form(name, text, values, whole_line))

    aws_id, aws_secret = "AKIA" + draw(UPPER_DIGITS, 16), mixed(BASE64, 40)
    add("aws key id", f"export AWS_ACCESS_KEY_ID={aws_id}", aws_id)
    add("aws secret env", f"AWS_SECRET_ACCESS_KEY={aws_secret}", aws_secret)
    s = mixed(BASE64, 40)
    add("aws secret inside another value", f"container env: AWS_SECRET_ACCESS_KEY={s} AWS_REGION=us-west-2", s)
    s = mixed(BASE64, 40)
    add("aws secret json", f'{{"level":"INFO","aws_secret_access_key":"{s}"}}', s)
    s = mixed(ALNUM, 40)
    add("aws secret quoted near its name", f"boto3.client('s3', aws_key = '{s}')", s)
    s = "ASIA" + draw(UPPER_DIGITS, 16)
    add("aws session key id in a presigned url", f"GET https://b.s3.amazonaws.com/o?X-Amz-Credential={s}/20260101/us-west-2/s3/aws4_request", s)
    p = password()
    add("password inside a config value", f"config: password={p}", p)
    p = password()
    add("yaml password", f"  password: {p}", p)
    p = password()
    add("json password", f'db: {{"user": "ml", "password": "{p}"}}', p)
    p = password()
    add("escaped json password", f'msg="{{\\"user\\": \\"ml\\", \\"password\\": \\"{p}\\"}}"', p)
    p = password()
    add("double-escaped json", f'{{"log": "{{\\\\\\"db_password\\\\\\": \\\\\\"{p}\\\\\\"}}"}}', p)
    p = password()
    add("url credentials", f"connecting to postgresql://trainer:{p}@db.internal/metrics", p)
    a, b = mixed(ALNUM, 8), mixed(ALNUM, 8)
    add("url password with a slash", f"DATABASE_URL=mysql://root:{a}/{b}@db.internal:3306/runs", f"{a}/{b}")
    a, b = mixed(ALNUM, 8), mixed(ALNUM, 8)
    add("url password with @ and #", f"redis cache at redis://:{a}@#{b}@cache.internal:6379/0", f"{a}@#{b}")
    p = password()
    add("tracking uri", f"MLFLOW_TRACKING_URI=https://ci-user:{p}@mlflow.internal:5000", p)
    body = pem_body()
    add("pem block", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----", *body)
    body = pem_body()
    add("encrypted pem block", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END ENCRYPTED PRIVATE KEY-----", *body)
    body = pem_body()
    add("pem in one json string", json.dumps({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n"
                                              + "\n".join(body) + "\n-----END PRIVATE KEY-----\n"}), *body)
    body = pem_body()
    add("pem body line alone", body[1], body[1])
    body = pem_body()
    add("pem short last line alone", body[-1], body[-1], whole_line=True)
    body = pem_body()
    add("pem tail without its begin", "\n".join(body[-3:]) + "\n-----END RSA PRIVATE KEY-----", *body[-3:])
    body = ec_body()
    add("ec pem without its begin", "\n".join(body) + "\n-----END EC PRIVATE KEY-----", *body)
    body = pem_body()
    add("openssh key without its end", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body[:4]), *body[:4])
    k = base64.b64encode(secrets.token_bytes(64)).decode()
    add("azure storage connection string",
        f"DefaultEndpointsProtocol=https;AccountName=mlckpt;AccountKey={k};EndpointSuffix=core.windows.net", k)
    k = mixed(ALNUM, 12)
    add("azure short account key", f"AZURE_STORAGE_CONNECTION_STRING=AccountName=dev;AccountKey={k};", k)
    sig = mixed(ALNUM, 30) + "%3D"
    add("azure sas signature", f"GET https://mlckpt.blob.core.windows.net/ckpt/step-100.pt?sv=2022-11-02&sp=r&se=2026-01-02&sig={sig} 403", sig)
    k = mixed(ALNUM, 32)
    add("x-api-key header", f"curl -H 'x-api-key: {k}' https://inference.internal/v1/models", k)
    p = password()
    add("PGPASSWORD", f"PGPASSWORD={p} psql -h db.internal -U trainer", p)
    p = password()
    add("--password VALUE", f"mysql --user root --password {p} --host db.internal", p)
    t = "hf_" + mixed(ALNUM, 34)
    add("--token VALUE", f"huggingface-cli login --token {t} --add-to-git-credential", t)
    cfg = dockerconfigjson()
    add("dockerconfigjson beside its key", f"  .dockerconfigjson: {cfg}", cfg)
    cfg = dockerconfigjson()
    add("dockerconfigjson alone", f"data {cfg}", cfg)
    hook = f"T{draw(UPPER_DIGITS, 10)}/B{draw(UPPER_DIGITS, 10)}/{mixed(ALNUM, 24)}"
    add("slack webhook", f"ALERT_WEBHOOK=https://hooks.slack.com/services/{hook}", hook)
    t = f"xoxb-{draw(string.digits, 12)}-{draw(string.digits, 13)}-{mixed(ALNUM, 24)}"
    add("slack bot token", f"SLACK_BOT_TOKEN={t}", t)
    t = f"xoxp-{draw(string.digits, 10)}-{draw(string.digits, 10)}-{draw(string.digits, 12)}-{draw(HEX, 32)}"
    add("slack user token", f"posting with {t}", t)
    t = f"xapp-1-A{draw(UPPER_DIGITS, 10)}-{draw(string.digits, 13)}-{draw(HEX, 64)}"
    add("slack app token", f"socket mode with {t}", t)
    t = "ghp_" + mixed(ALNUM, 36)
    add("github classic token", f"git clone https://{t}@github.com/org/repo", t)
    t = "github_pat_" + mixed(ALNUM, 22) + "_" + mixed(ALNUM, 59)
    add("github fine-grained token", f"GH_PAT={t}", t)
    t = "glpat-" + mixed(ALNUM, 20)
    add("gitlab token", f"pip install git+https://oauth2:{t}@gitlab.com/ml/lib.git", t)
    t = "hf_" + mixed(ALNUM, 34)
    add("hugging face token", f"loading model with token {t}", t)
    t = "sk-proj-" + mixed(ALNUM, 48)
    add("openai key", f"OPENAI_API_KEY={t}", t)
    t = jwt()
    add("jwt", f"token {t} expired", t)
    t = mixed(ALNUM + "._-", 40)
    add("bearer header", f"Authorization: Bearer {t}", t)
    c = base64.b64encode(f"admin:{password()}".encode()).decode()
    add("basic header", f"curl -H 'Authorization: Basic {c}' http://registry.internal/v2/", c)
    k = "AIza" + mixed(ALNUM + "_-", 35)
    add("gcp api key", f"maps client key {k}", k)
    k = "sk_live_" + mixed(ALNUM, 24)
    add("stripe key", f"billing configured with {k}", k)
    k = f"SG.{mixed(ALNUM, 22)}.{mixed(ALNUM, 43)}"
    add("sendgrid key", f"mail relay {k}", k)
    k = mixed(BASE64, 64)  # entropy alone misses about one such key in 20,000 (playbooks/redaction/entropy.py)
    add("unnamed high-entropy value", f"restoring session from cache entry {k} took 2ms", k)
    k = draw(HEX, 48)
    add("unnamed quoted hex", f'{{"value": "{k}"}}', k)
    k = draw(HEX, 40)
    add("wandb key", f"WANDB_API_KEY={k}", k)
    p = password()
    add("client secret quoted", f"client_secret='{p}'", p)
    k = mixed(BASE64, 40)
    add("camelCase secret", f"secretAccessKey: {k}", k)
    p = password()
    add("arrow assignment", f'credentials = {{ password => "{p}" }}', p)
    p = password()
    add("go assignment", f'dbPassword := "{p}"', p)
    t = "npm_" + mixed(ALNUM, 36)
    add("npm token", f"//registry.npmjs.org/:_authToken={t}", t)
    p = password()
    add("cookie header", f"Cookie: session={p}", p)
    # Shapes detect-secrets has no plugin for, known from gitleaks' rule set (the table's tag).
    k = "SK" + draw(HEX, 32)
    add("twilio api key", f"twilio client created with {k} for alerts", k)
    k = "dop_v1_" + draw(HEX, 64)
    add("digitalocean token", f"doctl auth init -t {k} --context ml", k)
    # Our own rules (playbooks/redaction/logins.py).
    p = password()
    add("mysql -pPASSWORD", f"mysql -h db.internal -u trainer -p{p} -e 'select 1' runs", p)
    p = password()
    add("mariadb -p'PASSWORD'", f"mariadb-dump -uroot -p'{p}' --all-databases > /backup/all.sql", p)
    k = draw(HEX, 40)
    add("netrc line", f"machine api.wandb.ai login user password {k}", k)
    return out
