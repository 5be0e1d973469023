"""The harness kit: case builders the exercise harnesses share.

Not an exercise (exercises/base.py refuses to load it as one). Everything
here builds the INPUTS of a case from its JSON spec, the same way on both
sides: the child builds them to call the learner, the parent rebuilds them
to compute the reference. So the sandbox stage copies this package whole,
and nothing here may compute an answer: references, known wrong
computations and judges live in the harnesses and in grading_engine.checks,
which the stage prunes.
"""
