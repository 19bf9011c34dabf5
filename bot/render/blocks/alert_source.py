"""What Alertmanager said about an alert, compactly, for the alert message to include: where it came
from and since when, its summary and description, and its labels as fields.

Labels and annotations are written by whoever writes the rules and by exporters: escaped like any
other untrusted text (text.clean). The only links are the alert's generatorURL (labelled with its
host) and http(s) URLs an annotation holds whole (runbook_url), shown as themselves; they came over
the authenticated webhook, from the operators' own Prometheus rules.
"""
from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import urlsplit

from bot.alerts.alertmanager import IncomingAlert
from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean

DESCRIPTION_LIMIT = 1000
VALUE_LIMIT = 150  # a label value in a field
NAME_LIMIT = 60
MORE_ANNOTATIONS = 4  # runbook_url and the like, one context element each
# Worst case, every limit reached: under 7,000 characters in four blocks, so the message that includes
# them keeps room under limits.TEXT_BUDGET.
# Shown in the context line (alertname, severity) or already told by the other blocks.
_NOT_FIELDS = ("alertname", "severity")
_TEXT_ANNOTATIONS = ("summary", "description")
# A URL is shown as a link only when it is short enough that its context element (2,000 characters)
# is never cut inside the link. Prometheus' generatorURL carries the rule's expression, so it gets
# more room than an annotation's URL.
_URL = re.compile(r"^https?://[^\s<>|]+$")
GENERATOR_URL_LIMIT = 1000
ANNOTATION_URL_LIMIT = 300
STATUS_MARKS = {"firing": ":rotating_light:", "resolved": ":white_check_mark:"}


def alert_source_blocks(alert: IncomingAlert) -> list[dict]:
    """At most four blocks: a context line, the summary and description, the labels, other annotations."""
    blocks = [kit.context(_origin(alert))]
    text = _annotation_text(alert)
    if text:
        blocks.append(kit.section(text))
    labels = {k: v for k, v in sorted(alert.problem.labels.items()) if k not in _NOT_FIELDS and v}
    if labels:
        shown = list(labels.items())[: limits.SECTION_FIELDS]
        blocks.append(kit.fields_section([f"*{clean(k, NAME_LIMIT)}*\n{clean(v, VALUE_LIMIT)}" for k, v in shown]))
    rest = [_annotation_line(k, v) for k, v in sorted(alert.annotations.items())
            if k not in _TEXT_ANNOTATIONS and v.strip()]
    if len(rest) > MORE_ANNOTATIONS:
        rest = rest[: MORE_ANNOTATIONS - 1] + [_more(len(rest) - MORE_ANNOTATIONS + 1, "annotation")]
    if len(labels) > limits.SECTION_FIELDS:
        rest.append(_more(len(labels) - limits.SECTION_FIELDS, "label"))
    if rest:
        blocks.append(kit.context(*rest))
    return blocks


def _origin(alert: IncomingAlert) -> str:
    parts = [f"{STATUS_MARKS.get(alert.status, '')} Alertmanager `{clean(alert.alertname, 200)}` {alert.status}".strip(),
             f"severity {alert.problem.severity}",
             f"since {_when(alert.starts_at)}"]
    if alert.status == "resolved" and alert.ends_at:
        parts.append(f"ended {_when(alert.ends_at)}")
    link, host = _link(alert.generator_url, GENERATOR_URL_LIMIT), urlsplit(alert.generator_url).netloc
    if link and host:  # labelled with its host: a reader sees where the link goes before following it
        parts.append(f"<{link}|{clean(host, 100)}>")
    return " · ".join(parts)


def _annotation_text(alert: IncomingAlert) -> str:
    summary = alert.annotations.get("summary", "").strip()
    description = alert.annotations.get("description", "").strip()
    lines = [f"*{clean(summary, 300)}*" if summary else "",
             clean(description, DESCRIPTION_LIMIT) if description and description != summary else ""]
    return "\n".join(line for line in lines if line)


def _annotation_line(key: str, value: str) -> str:
    value = value.strip()
    link = _link(value, ANNOTATION_URL_LIMIT)
    if link:
        return f"{clean(key, NAME_LIMIT)}: <{link}|{clean(value, 100)}>"
    return f"{clean(key, NAME_LIMIT)}: {clean(value, VALUE_LIMIT)}"


def _more(n: int, what: str) -> str:
    return f"{n} more {what}{'' if n == 1 else 's'} not shown"


def _link(url: str, limit: int) -> str | None:
    """``url`` ready for ``<url|label>``, or None when it is not http(s) or too long to show whole.
    Inside a link only ``&``, ``<`` and ``>`` are escaped (api.slack.com "Escaping text"); _URL keeps
    out the last two, and ``|``, which would end the URL."""
    link = url.replace("&", "&amp;")
    return link if _URL.match(url) and len(link) <= limit else None


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")
