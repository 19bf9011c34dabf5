"""Readers of whole documents in pasted text (``kubectl describe node``, ``nvidia-smi -q``, torchrun's
ChildFailedError block, a kubelet log): what only the document as a whole says, such as a node whose
allocatable GPUs fall short of its capacity, the rank that failed first, or a kubelet that never registers.

``signals(text, source)`` returns Signals like the line catalogue's; ``explain_text`` adds them to its
findings. A reader looks only at text that has its document's markers, so other pastes cost nothing.

A document in a log whose lines carry prefixes (``[rank3]:``, timestamps, ``kubectl logs --prefix``:
playbooks/failures/prefixes.py) is read without them, one stream per rank, so that a healthy rank's
lines interleaved with a failing rank's do not break its layout; line numbers stay those of the text.
"""
from __future__ import annotations

import dataclasses

from playbooks.documents import child_failed, describe_node, kubelet_registration, nvidia_smi_q
from playbooks.failures import prefixes
from playbooks.signatures.catalogue import iter_lines
from playbooks.signatures.model import Signal

# each: (markers: tuple[str, ...], read(text, source) -> list[Signal])
READERS: tuple = (
    (describe_node.MARKERS, describe_node.read),
    (nvidia_smi_q.MARKERS, nvidia_smi_q.read),
    (child_failed.MARKERS, child_failed.read),
    (kubelet_registration.MARKERS, kubelet_registration.read),
)


# Every marker of every reader: a caller that already found which of them occur (explain's prefilter) passes
# them as ``present`` and spares a search of the whole text per marker.
MARKERS: frozenset[str] = frozenset(marker for markers, _ in READERS for marker in markers)


def signals(text: str, *, source: str, present: frozenset[str] | None = None) -> list[Signal]:
    if present is None:
        readers = [(markers, read) for markers, read in READERS if all(marker in text for marker in markers)]
    else:
        readers = [(markers, read) for markers, read in READERS if present.issuperset(markers)]
    if not readers:
        return []
    found: list[Signal] = []
    for stream, linenos in _streams(text):
        for markers, read in readers:
            if all(marker in stream for marker in markers):
                found.extend(_renumbered(s, linenos) for s in read(stream, source))
    return found


def _streams(text: str) -> list[tuple[str, list[int] | None]]:
    """The text itself, or, when its lines carry prefixes, one text per rank without them and the line
    number in ``text`` of each of its lines."""
    head = [line for _, line in zip(range(400), iter_lines(text))]
    if not prefixes.prefixed(head):
        return [(text, None)]
    streams: dict[str, tuple[list[str], list[int]]] = {}
    for lineno, line in enumerate(iter_lines(text), start=1):
        removed = prefixes.remove(line)
        lines, numbers = streams.setdefault(removed.rank, ([], []))
        lines.append(removed.rest)
        numbers.append(lineno)
    return [("\n".join(lines), numbers) for lines, numbers in streams.values()]


def _renumbered(signal: Signal, linenos: list[int] | None) -> Signal:
    if linenos is None or signal.lineno is None or not 0 < signal.lineno <= len(linenos):
        return signal
    return dataclasses.replace(signal, lineno=linenos[signal.lineno - 1])
