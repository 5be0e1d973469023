"""This worker process's grading capacity: slots, lanes, and a burst for loops.

GRADER_POOL_SIZE grades run at once. Heavy exercises may hold at most
GRADER_HEAVY_SLOTS of them (and, slow or not, never more than that plus the
burst), so a burst of expensive exercises (or of loops in them) always
leaves GRADER_POOL_SIZE - GRADER_HEAVY_SLOTS for the light ones. A grade still running
after its expected time (grader.budgets.slow_after: most likely a loop) is
dropped to the lowest CPU priority by the sandbox and stops counting: up to
GRADER_BURST_SLOTS more grades may start meanwhile, so a handful of loops
cannot stall everyone for their whole budget.

Slow grades never hold more than the burst. One that turns slow while the
burst is full is set aside (grader.dispatch): stopped, and queued again to
run later at the lowest priority, in the burst only. Otherwise a deadline's
loops, which take many seconds of wall time to use their CPU budget at the
lowest priority on a busy machine, filled the burst and then the base
slots, and every light grade queued behind them (issue 44: light p95 12.7 s
instead of 2 s). Capacity is per process, i.e. per worker host.
"""

from __future__ import annotations

import threading

from django.conf import settings

from grader.models import Exercise

LIGHT, HEAVY = Exercise.Lane.LIGHT, Exercise.Lane.HEAVY


class Hold:
    """One claimed grade's place in the lanes; `slow()` once, `release()` once."""

    def __init__(self, lanes: Lanes, lane: str, *, is_slow: bool = False):
        self.lanes, self.lane, self.is_slow = lanes, lane, is_slow

    def slow(self) -> bool:
        """Count this grade as slow; True when it must be set aside: slow
        grades would then hold more than the burst (a base slot's room)."""
        with self.lanes.lock:
            if self.is_slow:
                return False
            self.is_slow = True
            self.lanes.active[self.lane] -= 1
            return 0 < self.lanes.burst < self.lanes.slow_count()

    def release(self) -> None:
        with self.lanes.lock:
            self.lanes.total -= 1
            self.lanes.heavy_total -= self.lane == HEAVY
            if not self.is_slow:
                self.lanes.active[self.lane] -= 1


class Lanes:
    def __init__(self, *, slots: int, heavy: int, burst: int = 0):
        self.slots = slots
        self.heavy = min(heavy, slots)
        self.burst = burst
        self.lock = threading.Lock()
        self.active = {LIGHT: 0, HEAVY: 0}  # running and not (yet) slow
        self.total = 0  # running, slow ones included
        self.heavy_total = 0

    def slow_count(self) -> int:
        return self.total - sum(self.active.values())

    def _fits(self, lane: str, *, set_aside: bool = False) -> bool:
        if self.total >= self.slots + self.burst:
            return False
        if set_aside and self.burst:
            # A grade set aside earlier runs slow from its start, in the
            # burst (with no burst here, another host set it aside: a slot
            # as for any other).
            if self.slow_count() >= self.burst:
                return False
            return lane != HEAVY or self.heavy_total < self.heavy + self.burst
        if sum(self.active.values()) >= self.slots:
            return False
        if lane != HEAVY:
            return True
        room = self.heavy + self.burst
        return self.active[HEAVY] < self.heavy and self.heavy_total < room

    def open_lanes(self, *, set_aside: bool = False) -> list[str]:
        """The lanes a grade (one set aside before, if `set_aside`) could
        start in now ([] when there is no room)."""
        with self.lock:
            return [
                lane for lane in (LIGHT, HEAVY) if self._fits(lane, set_aside=set_aside)
            ]

    def take(
        self, lane: str, *, background: bool = False, set_aside: bool = False
    ) -> Hold | None:
        """Room for a grade in `lane`, or None.

        Background work (a regrade) never takes the last free slot: a
        learner's submission that arrives meanwhile always finds one. A
        grade set aside before takes burst room only, and counts as slow
        from its start.
        """
        with self.lock:
            if not self._fits(lane, set_aside=set_aside):
                return None
            if background and self.total >= max(1, self.slots - 1):
                return None
            self.total += 1
            self.heavy_total += lane == HEAVY
            if not set_aside:
                self.active[lane] += 1
            return Hold(self, lane, is_slow=set_aside)

    def busy(self) -> bool:
        with self.lock:
            return self.total > 0


_lanes: dict[tuple[int, int, int], Lanes] = {}
_lanes_lock = threading.Lock()


def lanes_get() -> Lanes:
    """This process's lanes, sized from settings."""
    key = (
        settings.GRADER_POOL_SIZE,
        settings.GRADER_HEAVY_SLOTS,
        settings.GRADER_BURST_SLOTS,
    )
    with _lanes_lock:
        if key not in _lanes:
            _lanes[key] = Lanes(slots=key[0], heavy=key[1], burst=key[2])
        return _lanes[key]
