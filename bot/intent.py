"""Plain-language questions to an action and a target: "why is my job llama-3-8b pending?".

Deliberately small and predictable: keywords pick the action, a kind word ("job", "pod", ...) or a
Kubernetes-looking name picks the target. Anything that is not a valid name never becomes a target.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.targets import KIND_ALIASES
from playbooks import linear

_WORD = linear.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_NAME = linear.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_NODES = linear.compile(r"\b(gpu )?nodes\b")
_NS = linear.compile(r"(?:\bin\s+(?:the\s+)?(?:namespace|ns)\s+|\s-n\s+|\bnamespace\s+)(?P<ns>[a-z0-9][-a-z0-9]*)")
_KIND_WORDS = {**KIND_ALIASES, "training": "auto"}
_STOP = {
    "why", "is", "my", "the", "a", "an", "what", "killed", "kill", "pending", "stuck", "job", "pod", "jobs", "pods",
    "failing", "failed", "fail", "crashed", "crash", "crashing", "down", "broken", "dying", "died", "happened", "to",
    "with", "in", "on", "of", "for", "please", "can", "you", "check", "diagnose", "gpubot", "help", "me", "it",
    "does", "did", "not", "won't", "wont", "start", "starting", "running", "run", "hey", "hi", "are", "there",
    "namespace", "ns", "and", "or", "so", "slow", "this", "that", "our", "was", "has", "have", "been", "still", "who",
    "scheduled", "scheduling", "waiting", "oom", "error", "errors", "gpu", "gpus", "nodes", "node", "nodepool", "nodepools",
    "training", "pytorchjob", "how", "show", "tell", "about", "look", "at", "explain", "log", "logs", "status",
}
PENDING_WORDS = ("pending", "stuck", "not scheduled", "not scheduling", "won't start", "wont start", "waiting",
                 "not starting", "doesn't start", "does not start", "unschedulable")
FAILED_WORDS = ("killed", "died", "crash", "fail", "oom", "error", "dying", "broke", "restart", "terminated")


@dataclass(frozen=True)
class Intent:
    action: str  # why-pending, why-failed, diagnose, nodes, nodepools, help
    target: str | None = None  # "kind/name" or a bare name
    namespace: str | None = None


def parse_question(text: str) -> Intent:
    lowered = " " + " ".join(text.strip().split()).lower() + " "
    ns_match = _NS.search(lowered)
    namespace = ns_match.group("ns") if ns_match else None
    if ns_match:
        lowered = lowered[: ns_match.start()] + " " + lowered[ns_match.end():]
    target = _target(lowered)
    if any(w in lowered for w in PENDING_WORDS):
        action = "why-pending"
    elif any(w in lowered for w in FAILED_WORDS):
        action = "why-failed"
    elif target is None and "nodepool" in lowered:
        action = "nodepools"
    elif target is None and _NODES.search(lowered):
        action = "nodes"
    elif target is None:
        action = "help"
    else:
        action = "diagnose"
    return Intent(action=action, target=target, namespace=namespace)


def _target(lowered: str) -> str | None:
    words = [w.strip(".,?!:;'\"`()") for w in _WORD.findall(lowered)]
    for i, word in enumerate(words):
        if "/" in word:
            kind, _, name = word.partition("/")
            if kind in KIND_ALIASES and _NAME.match(name):
                return f"{KIND_ALIASES[kind]}/{name}"
        kind = _KIND_WORDS.get(word)
        if kind and i + 1 < len(words):
            name = words[i + 1]
            if _NAME.match(name) and name not in _STOP:
                # "job" in a sentence means any training job: resolve PyTorchJob, Job or pod by name.
                return name if kind in ("job", "auto") else f"{kind}/{name}"
    for word in words:
        if _NAME.match(word) and word not in _STOP and ("-" in word or any(c.isdigit() for c in word)):
            return word
    return None
