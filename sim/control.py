"""Sim control state: the API request counter and log, and injected faults.

Tests use the counter to bound how many API calls a diagnosis makes, and faults to exercise the
gateway's retries and timeouts.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

_LOG_LENGTH = 1000


@dataclass
class Fault:
    status: int | None  # None: only delay, then serve the request normally
    times: int
    path_contains: str
    delay_seconds: float
    method: str | None = None  # only requests with this method (None: any)
    after: int = 0  # matching requests served normally before the fault starts (a dry run, then the write)


def parse_fault(spec: object) -> Fault:
    """Validate a POST /sim/faults body; ValueError says what is wrong."""
    if not isinstance(spec, dict):
        raise ValueError("fault must be a JSON object")
    status = spec.get("status")
    if status is not None and (not isinstance(status, int) or not 100 <= status <= 599):
        raise ValueError(f"status must be an HTTP status code, got {status!r}")
    if status is not None and status < 400:
        status = None  # a success status only delays: the request is then served for real
    times = spec.get("times", 1)
    if not isinstance(times, int) or times < 1:
        raise ValueError(f"times must be a positive integer, got {times!r}")
    delay = spec.get("delay_seconds", 0) or 0
    if not isinstance(delay, (int, float)) or delay < 0:
        raise ValueError(f"delay_seconds must be a non-negative number, got {delay!r}")
    if status is None and not delay:
        raise ValueError("a fault needs an error status (400-599), a delay_seconds, or both")
    method = spec.get("method")
    if method is not None and method not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        raise ValueError(f"method must be GET, POST, PUT, PATCH or DELETE, got {method!r}")
    after = spec.get("after", 0)
    if not isinstance(after, int) or after < 0:
        raise ValueError(f"after must be a non-negative integer, got {after!r}")
    return Fault(status, times, str(spec.get("path_contains", "")), float(delay), method, after)


class ControlState:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._log: deque[str] = deque(maxlen=_LOG_LENGTH)
        self._details: deque[dict] = deque(maxlen=_LOG_LENGTH)
        self._faults: list[Fault] = []

    def record(self, *, method: str, target: str, status: int, content_type: str = "") -> None:
        with self._lock:
            self._count += 1
            self._log.append(f"{method} {target} {status}")
            # The header as sent: which patch a PATCH was (merge, JSON, strategic) is in it alone.
            self._details.append({"method": method, "target": target, "status": status, "contentType": content_type})

    def request_count(self) -> int:
        with self._lock:
            return self._count

    def request_log(self) -> list[str]:
        with self._lock:
            return list(self._log)

    def request_details(self) -> list[dict]:
        with self._lock:
            return [dict(d) for d in self._details]

    def reset_requests(self) -> None:
        with self._lock:
            self._count = 0
            self._log.clear()
            self._details.clear()

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def take_fault(self, target: str, method: str = "GET") -> Fault | None:
        """The first fault matching this request, used up by one."""
        with self._lock:
            for fault in self._faults:
                if fault.path_contains in target and fault.method in (None, method):
                    if fault.after:
                        fault.after -= 1
                        continue
                    fault.times -= 1
                    if fault.times == 0:
                        self._faults.remove(fault)
                    return fault
            return None
