"""The one error the client shows: a line a learner can act on, exit code 2."""


class CourseError(Exception):
    """Something stopped the command (not a verdict): printed as one line."""

    exit_code = 2
