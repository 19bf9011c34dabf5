"""How a value read from a cluster, a log or a paste may enter a fix snippet.

Such text is tenant input: a node "named" ``$(curl …|sh)`` in a log line must not become a command in a
snippet someone pastes into a shell. Two rules, applied by ``playbooks.fixes`` to every value:

- A value of a known kind (a node name, a namespace, an instance type, ...) that is not a valid value of
  that kind is replaced by a ``Placeholder`` the user fills in, with the reason (``check_values``).
- Every value is written in the output language's own syntax: a shell word (``shell_word``), a YAML
  scalar (``yaml_scalar``), a JSON value (``json_value``) or one line of text for comments and summaries
  (``one_line``). Text that is already written for its language (``Rendered``) passes through as is.
"""
from __future__ import annotations

import json
import re
import shlex
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

# k8s.io/apimachinery pkg/util/validation/validation.go: IsDNS1123Label (63 characters) and
# IsDNS1123Subdomain (253 characters, dot-separated labels).
_DNS1123_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
# Same file, IsValidLabelValue: empty, or up to 63 characters beginning and ending alphanumeric.
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
# EC2 instance type names (p4d.24xlarge, u-6tb1.metal, trn1n.32xlarge), one or a comma-separated list.
_INSTANCE_TYPES = re.compile(r"[a-z][a-z0-9-]{0,30}\.[a-z0-9]{1,30}(?:,[a-z][a-z0-9-]{0,30}\.[a-z0-9]{1,30}){0,31}")
# EC2 instance ids: i- and 8 or 17 hexadecimal digits.
_INSTANCE_ID = re.compile(r"i-(?:[0-9a-f]{8}|[0-9a-f]{17})")
# EKS CreateCluster: name pattern ^[0-9A-Za-z][A-Za-z0-9\-_]*, 1 to 100 characters.
_EKS_CLUSTER = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")


# distribution/reference regexp.go (the grammar the kubelet's dockerref.ParseNormalizedNamed reads): an
# optional domain[:port]/, lowercase path components joined by [._]|__|-+, an optional :tag and @digest; the
# name at most 255 characters (reference.go NameTotalLengthMax).
_DOMAIN_PART = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(rf"(?P<name>(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]{{1,5}})?/)?{_PATH_PART}(?:/{_PATH_PART})*)"
                    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
                    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,128})?")


def is_image_reference(value: str) -> bool:
    found = _IMAGE.fullmatch(value) if len(value) <= 512 else None
    return found is not None and len(found.group("name")) <= 255


def is_dns1123_label(value: str) -> bool:
    return _DNS1123_LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= 253 and all(is_dns1123_label(part) for part in value.split("."))


@dataclass(frozen=True)
class Kind:
    noun: str  # "node name": said in the reason
    placeholder: str  # what the user fills in
    valid: Callable[[str], bool]
    rule: str  # what a valid value looks like


_NODE = Kind("node name", "<node-name>", is_dns1123_subdomain, "an RFC 1123 subdomain")
_POD = Kind("pod name", "<pod>", is_dns1123_subdomain, "an RFC 1123 subdomain")
_NAMESPACE = Kind("namespace", "<namespace>", is_dns1123_label, "an RFC 1123 label")

# Template variables that hold a value of a known kind, by the name the templates give them.
KINDS: dict[str, Kind] = {
    "node": _NODE,
    "peer_node": _NODE,
    "pod": _POD,
    "peer": _POD,
    "plugin_pod": _POD,
    "namespace": _NAMESPACE,
    "plugin_namespace": _NAMESPACE,
    "container": Kind("container name", "<container>", is_dns1123_label, "an RFC 1123 label"),
    "name": Kind("object name", "<name>", is_dns1123_subdomain, "an RFC 1123 subdomain"),
    "nodeclaim": Kind("NodeClaim name", "<nodeclaim-name>", is_dns1123_subdomain, "an RFC 1123 subdomain"),
    "nodepool": Kind("NodePool name", "<nodepool-name>", is_dns1123_subdomain, "an RFC 1123 subdomain"),
    "nodeclass": Kind("NodeClass name", "<nodeclass-name>", is_dns1123_subdomain, "an RFC 1123 subdomain"),
    "job": Kind("job name", "<job-name>", lambda v: _LABEL_VALUE.fullmatch(v) is not None, "a label value"),
    "instance_type": Kind("instance type", "<instance-type>", lambda v: _INSTANCE_TYPES.fullmatch(v) is not None,
                          "such as p4d.24xlarge"),
    "instance_id": Kind("instance id", "<instance-id>", lambda v: _INSTANCE_ID.fullmatch(v) is not None,
                        "i- and 8 or 17 hex digits"),
    "image": Kind("image reference", "<image>", is_image_reference, "registry/repository:tag"),
    "cluster": Kind("cluster name", "<cluster-name>", lambda v: _EKS_CLUSTER.fullmatch(v) is not None,
                    "letters, digits, '-' and '_'"),
}


class Rendered(str):
    """Text already written in the snippet's language (a quoted word, a YAML block): not quoted again."""


class Placeholder(str):
    """What the user fills in where the input held no valid value; ``reason`` says why."""

    reason: str

    def __new__(cls, text: str, reason: str) -> "Placeholder":
        made = super().__new__(cls, text)
        made.reason = reason
        return made


def check_values(context: dict[str, Any]) -> dict[str, Any]:
    """``context`` with every non-empty string of a known kind that is not valid replaced by a Placeholder."""
    # What callers pass is input, never text already written for a snippet: a Rendered is taken back to str.
    checked = {k: str.__str__(v) if isinstance(v, Rendered) else v for k, v in context.items()}
    for key, value in checked.items():
        kind = KINDS.get(key)
        if kind is None or not isinstance(value, str) or not value or isinstance(value, Placeholder):
            continue
        if not kind.valid(value):
            checked[key] = Placeholder(kind.placeholder, f"the {kind.noun} in the input was not a valid "
                                                         f"{kind.noun} ({kind.rule}): fill it in")
    return checked


def one_line(value: Any) -> str:
    """``value`` as text with line breaks and other control or format characters made spaces: safe after a
    ``#`` in a shell or YAML comment, which ends at the first line break (including U+2028 / U+2029 and
    NEL, which YAML and some terminals break on)."""
    text = str(value)
    return "".join(" " if unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") else c
                   for c in text)


def shell_word(value: Any) -> Rendered:
    """One shell word whatever ``value`` holds: POSIX single quotes (``shlex.quote``) around one line."""
    if isinstance(value, Rendered):
        return value
    return Rendered(shlex.quote(one_line(value)))


def yaml_scalar(value: Any) -> Rendered:
    """``value`` as one YAML flow scalar on one line, written by PyYAML (plain when it reads back as the
    same string, quoted and escaped otherwise)."""
    if isinstance(value, Rendered):
        return value
    import yaml

    data = value if isinstance(value, (bool, int, float)) or value is None else str(value)
    text = yaml.safe_dump(data, default_flow_style=True, width=float("inf"), allow_unicode=False)
    text = text.removesuffix("\n").removesuffix("\n...")
    if "\n" in text:
        text = yaml.safe_dump(data, default_style='"', width=float("inf"), allow_unicode=False).rstrip("\n")
    return Rendered(text)


def json_value(value: Any) -> Rendered:
    if isinstance(value, Rendered):
        return value
    return Rendered(json.dumps(value if isinstance(value, (bool, int, float, list, dict)) or value is None
                               else str(value)))


def text_line(value: Any) -> Rendered:
    """Prose inside a comment (shell, YAML) or inside a value later serialized whole: one line, unquoted."""
    return value if isinstance(value, Rendered) else Rendered(one_line(value))
