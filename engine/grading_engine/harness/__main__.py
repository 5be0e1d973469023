"""`python -m grading_engine.harness`: read a job on stdin, write the result to fd 3.

The cold path of a runner without a warm pool: it imports only what this job
needs (torch and one exercise module), not every exercise's reference model.
"""

from __future__ import annotations

import json
import sys

from grading_engine.harness.child import execute_job
from grading_engine.harness.result_fd import RESULT_FD
from grading_engine.reference.cache import process_ends_with_its_job


def main() -> None:
    # This process (or fork) exits after the one job: a cached model it
    # changes cannot reach anyone else.
    process_ends_with_its_job()
    try:
        job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        if not isinstance(job, dict):
            raise ValueError("job is not a JSON object")
    except (ValueError, UnicodeDecodeError) as exc:
        job = {"bad_job": str(exc)}  # execute_job reports it as a job error
    execute_job(job, RESULT_FD)


if __name__ == "__main__":
    main()
