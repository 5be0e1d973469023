"""The grading engine: GPT-2 reference, checks, harness, sandbox and harnesses.

Free of Django so that the web service and a learner's own machine grade with
the same code (docs/architecture.md). `grading_engine.grading.grade` is the
entry point: a runner executes the learner's code, the parent judges.
"""

__version__ = "1.0.0"
