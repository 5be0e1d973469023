"""This worker process's grading slots, and how many heavy grades may hold them.

Every slot may grade a light exercise; at most GRADER_HEAVY_SLOTS may grade
heavy ones at once, so a burst of expensive exercises (or of loops in them)
always leaves a slot for the light ones. Lanes are per process, i.e. per
worker host: each host keeps its own light slots free.
"""

from __future__ import annotations

import threading

from django.conf import settings

from grader.models import Exercise

LIGHT, HEAVY = Exercise.Lane.LIGHT, Exercise.Lane.HEAVY


class Lanes:
    def __init__(self, *, slots: int, heavy: int):
        self.slots = slots
        self.heavy = min(heavy, slots)
        self._lock = threading.Lock()
        self._running = {LIGHT: 0, HEAVY: 0}

    def open_lanes(self) -> list[str]:
        """The lanes a free slot could take a grade from now ([] when full)."""
        with self._lock:
            if sum(self._running.values()) >= self.slots:
                return []
            return [LIGHT, HEAVY] if self._running[HEAVY] < self.heavy else [LIGHT]

    def take(self, lane: str) -> bool:
        """Hold a slot for a grade in `lane`; False when there is no room."""
        with self._lock:
            full = sum(self._running.values()) >= self.slots
            if full or (lane == HEAVY and self._running[HEAVY] >= self.heavy):
                return False
            self._running[lane] += 1
            return True

    def give_back(self, lane: str) -> None:
        with self._lock:
            self._running[lane] -= 1

    def running(self) -> dict[str, int]:
        with self._lock:
            return dict(self._running)


_lanes: dict[tuple[int, int], Lanes] = {}
_lanes_lock = threading.Lock()


def lanes_get() -> Lanes:
    """This process's lanes, sized from settings."""
    key = (settings.GRADER_POOL_SIZE, settings.GRADER_HEAVY_SLOTS)
    with _lanes_lock:
        if key not in _lanes:
            _lanes[key] = Lanes(slots=key[0], heavy=key[1])
        return _lanes[key]
