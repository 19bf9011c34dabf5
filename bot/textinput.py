"""Checking pasted logs before they are scanned: empty, binary and oversized input are refused."""
from __future__ import annotations

from bot.errors import UserError

_SNIFF = 8192


def decode_log(data: bytes, *, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise UserError(
            f"the input is {len(data) / 1e6:.1f} MB; explain reads at most {max_bytes / 1e6:.0f} MB: "
            f"pass the end of the log instead (tail -c {max_bytes // 1_000_000}M FILE | gpubot explain -)"
        )
    if not data.strip():
        raise UserError("nothing to explain: the input is empty (pass a log file, or - to read standard input)")
    head = data[:_SNIFF]
    if b"\x00" in head or _binary_ratio(head) > 0.3:
        raise UserError("the input looks binary, not a log: pass the text output of kubectl logs / describe / dmesg")
    return data.decode("utf-8", errors="replace")


def _binary_ratio(chunk: bytes) -> float:
    if not chunk:
        return 0.0
    text = chunk.decode("utf-8", errors="replace")
    odd = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\x1b"))
    return odd / max(len(text), 1)
