"""Python's cyclic garbage collector while a process starts, and after.

Importing Django, Celery, torch and the apps creates hundreds of thousands of
objects that live as long as the process, and almost no garbage. At the
default threshold (a collection per 700 new objects) a web or worker process
ran about 900 collections while starting, each walking the young objects, and
some of them every object there is: 0.5 s of a 4 s start measured, idle, and
in the test suite (which starts hundreds of these processes) 9% of all the
CPU time Python spent. So a process collects rarely until it has started,
then freezes what it loaded (a frozen object is never walked again, and a
forked child's collections no longer write to the pages it shares with its
parent) and collects at the usual pace. A sandbox job always runs at the
usual pace: the zygote restores it before it forks a slot.
"""

from __future__ import annotations

import gc

# Python's own default, restored once the process has started.
USUAL = (700, 10, 10)
# While starting: a young collection per 50,000 new objects.
STARTING = (50_000, 20, 20)


def while_starting() -> None:
    """Collect rarely: first thing in every entry point (config, the zygote)."""
    gc.set_threshold(*STARTING)


def started() -> None:
    """The process has loaded what it keeps: collect the start's garbage
    (the raised threshold left it), freeze the rest, collect as usual."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*USUAL)
