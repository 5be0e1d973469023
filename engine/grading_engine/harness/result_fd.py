"""The descriptor a child writes its result to; every runner moves it there.

A module of its own, free of torch, so that the sandbox's lock-down can name
it without importing torch: the probe that every cold runner and grading
worker starts with runs the lock-down, and importing torch was 1 s of its
1.4 s.
"""

RESULT_FD = 3
