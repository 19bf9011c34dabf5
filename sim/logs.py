"""Container logs served by the pods/{name}/log endpoint, keyed like the kubelet keeps them."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sim import resources


@dataclass(frozen=True)
class LogKey:
    namespace: str
    pod: str
    container: str
    previous: bool


def tail(text: str, *, tail_lines: int | None, limit_bytes: int | None) -> str:
    """tailLines first, then limitBytes, as the kubelet applies them."""
    if tail_lines is not None:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-tail_lines:]) if tail_lines > 0 else ""
    if limit_bytes is not None:
        text = text.encode()[:limit_bytes].decode(errors="ignore")
    return text


def pick_container(pod: dict, container: str | None) -> str:
    """The container a log request means, with the real server's errors when it cannot tell."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = [c.get("name") for c in spec.get("containers") or []]
    declared = containers + [c.get("name") for c in spec.get("initContainers") or []]
    if container is None:
        if len(containers) > 1:
            raise resources.bad_request(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
            )
        return containers[0] if containers else ""
    if declared and container not in declared:
        raise resources.bad_request(f"container {container} is not valid for pod {name}")
    return container


class LogStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[LogKey, str] = {}

    def append(self, key: LogKey, text: str) -> None:
        """Append, so several scenarios can contribute to one shared controller log."""
        with self._lock:
            self._logs[key] = self._logs.get(key, "") + text

    def read(self, key: LogKey) -> str:
        text = self._logs.get(key)
        if text is not None:
            return text
        if key.previous:
            raise resources.bad_request(
                f'previous terminated container "{key.container}" in pod "{key.pod}" not found'
            )
        return ""
