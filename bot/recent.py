"""Small bounded, thread-safe memories: threads the bot started, diagnoses behind recent messages."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")


class Recent(Generic[V]):
    def __init__(self, size: int = 500) -> None:
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            return self._items.get(key)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items
