"""/client/: how to install the learner client, and its wheels.

Public: a wheel holds the runner, the checks and the client, no solution
(grading_engine.learner_edition), and pip fetches it without a session.
"""

from __future__ import annotations

from django.http import FileResponse, Http404
from django.shortcuts import render

from grader import client_dist


def client_index(request):
    """The install command, the wheels and what a learner's machine gets."""
    base = request.build_absolute_uri("/")
    return render(
        request,
        "grader/client.html",
        {
            "command": client_dist.install_command(base),
            "wheels": client_dist.wheels(),
            "server": base.rstrip("/"),
        },
    )


def client_wheel(request, filename: str):
    """One of the wheels the manifest lists (anything else: 404)."""
    path = client_dist.wheel_path(filename)
    if path is None:
        raise Http404("No such file.")
    response = FileResponse(path.open("rb"), as_attachment=True, filename=path.name)
    response["Content-Type"] = "application/zip"
    return response
