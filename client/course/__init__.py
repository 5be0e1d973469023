"""The GPT-2 course's learner client: `course` on the command line and the
`%%check` / `%%submit` cell magics in Jupyter (`%load_ext course`).

Local checks run the server's own grading engine on an exercise's visible
cases; hidden cases only ever run on the server, at submit.
"""

__version__ = "1.0.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext course`: register the cell magics."""
    from course.magic import CourseMagics

    ipython.register_magics(CourseMagics)
