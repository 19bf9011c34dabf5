"""Checking pasted logs before they are scanned: empty, binary and oversized input are refused."""
from __future__ import annotations

from bot.errors import UserError

_SNIFF = 8192
# Slack truncates a message past 40,000 characters (https://api.slack.com/methods/chat.postMessage,
# argument text) and the explain form takes 3,000: a longer paste did not come from a Slack client,
# and is refused before anything reads it.
SLACK_PASTE_MAX_CHARS = 40_000


def check_paste(text: str, *, max_chars: int = SLACK_PASTE_MAX_CHARS) -> None:
    if len(text) > max_chars:
        raise UserError(
            f"that paste is {len(text):,} characters; gpubot explains at most {max_chars:,} from Slack: "
            "paste the lines around the error, or run gpubot explain FILE on the whole log"
        )


def decode_log(data: bytes, *, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise UserError(
            # Callers read at most max_bytes + 1, so the input's real size is not known here.
            f"the input is larger than explain reads (at most {_size(max_bytes)}): "
            f"pass the end of the log instead (tail -c {max_bytes} FILE | gpubot explain -)"
        )
    if not data.strip():
        raise UserError("nothing to explain: the input is empty (pass a log file, or - to read standard input)")
    head = data[:_SNIFF]
    if b"\x00" in head or _binary_ratio(head) > 0.3:
        raise UserError("the input looks binary, not a log: pass the text output of kubectl logs / describe / dmesg")
    return data.decode("utf-8", errors="replace")


def _size(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1e6:.1f} MB"
    return f"{count:,} bytes"


def _binary_ratio(chunk: bytes) -> float:
    if not chunk:
        return 0.0
    text = chunk.decode("utf-8", errors="replace")
    odd = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\x1b"))
    return odd / max(len(text), 1)
