"""The child side of grading: run learner code, send back plain data.

`child` executes a job next to the learner's code, `wire` is the byte format
of its result, `capture` turns learner values into trusted-to-parse data, and
`subprocess_runner` is the plain (unhardened) process boundary.
"""
