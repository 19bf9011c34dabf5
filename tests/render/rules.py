"""The rules of docs/messages.md as checks over a rendered message (its blocks and its notification text).

``rule_problems(message, diagnosis=...)`` returns one line per broken rule, naming the rule and the text
that broke it; an empty list is a message an on-call engineer can read at 3 a.m.:

1. Answer first: a diagnosis' header (with the bold line under it when the cause was too long for a
   header) names the target and the cause; the notification text starts with the same answer.
2. No text repeated: no sentence of the prose appears twice.
3. No internal names in prose: finding codes, remediation kinds, fingerprints ("code@owner") and
   "Request approval:" stay out of headers, sections and the notification text; codes live in context.
4. An error never calls itself "listed for completeness".
5. Buttons speak plain words: every label is one of bot.render.wording's.
6. Slack accepts it: tests/fakes/block_kit_limits finds nothing to refuse.
"""
from __future__ import annotations

import re

from bot.render.answer import answer, plain_title, subject
from bot.render.wording import HEALTHY, button_labels
from playbooks.codes import CODES
from playbooks.model import REMEDIATION_KINDS, Diagnosis
from tests.fakes.block_kit_limits import problems
from tests.render.helpers import buttons

INTERNAL = tuple(CODES) + REMEDIATION_KINDS
FINGERPRINT = re.compile(r"\b[a-z_]+\.[a-z_]+@[\w/.-]+|\bsha256:[0-9a-f]{8,}")
FENCED = re.compile(r"```.*?```", re.S)
# sentences, lines, bullets and the clauses either side of ": " (a header's "<target> <state>: <cause>")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|\s•\s|:\s")
MIN_SENTENCE = 20  # shorter pieces ("What to do:", a marker, a name) may well come back


def prose(text: str) -> str:
    """What people read as sentences: code fences and "> " quotes (verbatim evidence) left out."""
    text = FENCED.sub(" ", text)
    return "\n".join(line for line in text.split("\n") if not line.startswith(("> ", "&gt; ")))


def prose_texts(blocks: list[dict]) -> list[tuple[str, str]]:
    """(block type, prose) of every header and section (text and fields): the blocks people read first."""
    out = []
    for block in blocks:
        if block["type"] == "header":
            out.append(("header", block["text"]["text"]))
        elif block["type"] == "section":
            if "text" in block:
                out.append(("section", prose(block["text"]["text"])))
            out += [("section field", prose(f["text"])) for f in block.get("fields", [])]
    return out


def _sentences(text: str) -> list[str]:
    text = re.sub(r":[a-z_]+:", "", text)  # emoji markers
    pieces = (re.sub(r"^\d+\.\s|[*_`]", "", p.strip(" •*")).strip(" .") for p in SENTENCE_END.split(text))
    return [re.sub(r"\s+", " ", p) for p in pieces if len(p) >= MIN_SENTENCE]


def rule_problems(message: dict, *, diagnosis: Diagnosis | None = None) -> list[str]:
    """``message``: {"text": notification text, "blocks": [...]} (either may be absent)."""
    blocks, text = message.get("blocks") or [], message.get("text") or ""
    found = [f"Slack would refuse it: {p}" for p in problems(blocks)]
    read = prose_texts(blocks) + ([("notification text", text)] if text else [])
    for where, words in read:
        for name in INTERNAL:
            if re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w-])", words):
                found.append(f"internal name {name!r} in the {where}: {words[:120]!r}")
        for hit in FINGERPRINT.findall(words):
            found.append(f"fingerprint {hit!r} in the {where}")
        if "Request approval:" in words:
            found.append(f"a button's internal wording in the {where}")
    seen: dict[str, str] = {}
    for where, words in prose_texts(blocks):  # the notification text repeats the header by design
        for sentence in _sentences(words):
            key = sentence.lower()
            if key in seen:
                found.append(f"repeated in the {where} (first in the {seen[key]}): {sentence[:120]!r}")
            seen.setdefault(key, where)
    serious = any(m in json_text(blocks) for m in (":red_circle:", ":large_orange_circle:"))
    if serious and "listed for completeness" in " ".join(w for _, w in read):
        found.append("an error-level message calls a finding 'listed for completeness'")
    allowed = button_labels()
    found += [f"button label not in plain words: {b['text']['text']!r}" for b in buttons(blocks)
              if b.get("type") == "button" and b["text"]["text"] not in allowed]
    if diagnosis is not None:
        found += _answer_first(diagnosis, blocks, text)
    return found


def _answer_first(d: Diagnosis, blocks: list[dict], text: str) -> list[str]:
    head = blocks[0]["text"]["text"] if blocks and blocks[0]["type"] == "header" else ""
    if not head:
        return ["a diagnosis starts with a header"]
    told = head
    if len(blocks) > 1 and blocks[1]["type"] == "section" and ":" not in head.split(" ", 1)[-1]:
        told += " " + blocks[1]["text"]["text"]  # the cause, too long for the header, comes right under it
    a = answer(d)
    cause = HEALTHY if a.lead is None else plain_title(d, d.findings[a.lead])
    out = []
    if subject(d) not in head:
        out.append(f"the header does not name the target ({subject(d)!r}): {head!r}")
    if cause[:60] not in unescape(told):
        out.append(f"the header does not say the cause ({cause[:60]!r}): {told[:200]!r}")
    if not unescape(text).startswith(subject(d)):
        out.append(f"the notification text does not lead with the answer: {text[:120]!r}")
    return out


def unescape(text: str) -> str:
    return text.replace("*", "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def json_text(blocks: list[dict]) -> str:
    import json
    return json.dumps(blocks)
