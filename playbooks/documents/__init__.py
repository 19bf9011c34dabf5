"""Readers of whole documents in pasted text (``kubectl describe node``, ``nvidia-smi -q``, torchrun's
ChildFailedError block, a kubelet log): what only the document as a whole says, such as a node whose
allocatable GPUs fall short of its capacity, the rank that failed first, or a kubelet that never registers.

``signals(text, source)`` returns Signals like the line catalogue's; ``explain_text`` adds them to its
findings. A reader looks only at text that has its document's markers, so other pastes cost nothing.
"""
from __future__ import annotations

from playbooks.documents import child_failed, describe_node, kubelet_registration, nvidia_smi_q
from playbooks.signatures.model import Signal

# each: (markers: tuple[str, ...], read(text, source) -> list[Signal])
READERS: tuple = (
    (describe_node.MARKERS, describe_node.read),
    (nvidia_smi_q.MARKERS, nvidia_smi_q.read),
    (child_failed.MARKERS, child_failed.read),
    (kubelet_registration.MARKERS, kubelet_registration.read),
)


def signals(text: str, *, source: str) -> list[Signal]:
    found: list[Signal] = []
    for markers, read in READERS:
        if all(marker in text for marker in markers):
            found.extend(read(text, source))
    return found
