"""Talking to the course server's API v1; every failure becomes one line.

Each call sends the client's grading-engine version (X-Course-Engine): the
server refuses exercise files to a client whose engine differs and warns
on its other answers, since local checks would then not be the server's.
"""

from __future__ import annotations

import math
import sys
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import requests
from grading_engine import __version__ as ENGINE_VERSION

from course import __version__
from course.errors import CourseError

ENGINE_HEADER = "X-Course-Engine"
WARNING_HEADER = "X-Course-Engine-Warning"
TIMEOUT = (10, 30)  # connect, read (seconds)


def server_url(raw: str) -> str:
    """`http(s)://host[:port][/prefix]` without a trailing slash, or a usage error."""
    raw = raw.strip()
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CourseError(
            f"{raw!r} is not a server URL: give one like https://course.example.org"
        )
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def retry_after(response: requests.Response) -> str:
    """When to try again, from Retry-After (seconds or an HTTP date)."""
    raw = response.headers.get("Retry-After", "").strip()
    seconds = None
    if raw.isdigit():
        seconds = int(raw)
    elif raw:
        try:
            seconds = (parsedate_to_datetime(raw) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            seconds = None
    if seconds is None:
        return "try again in a minute"
    seconds = max(1, math.ceil(seconds))
    at = datetime.fromtimestamp(time.time() + seconds).strftime("%H:%M:%S")
    return f"try again in {seconds} s (at {at})"


def _detail(response: requests.Response) -> str:
    """The server's message: `detail`, or its field errors, in one line."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str):
            return body["detail"]
        parts = []
        for field, errors in body.items():
            errors = errors if isinstance(errors, list) else [errors]
            text = "; ".join(str(e) for e in errors)
            plain = field in ("code", "non_field_errors")
            parts.append(text if plain else f"{field}: {text}")
        return " ".join(parts)
    return ""


class Api:
    def __init__(self, url: str, token: str | None = None):
        self.url = server_url(url)
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Accept": "application/json",
                "User-Agent": f"course-client/{__version__}",
                ENGINE_HEADER: ENGINE_VERSION,
            }
        )
        if token:
            self.session.headers["Authorization"] = f"Token {token}"
        self.warned = False

    def call(self, method: str, path: str, *, expect=(200,), **kwargs):
        """The response if its status is in `expect`, else a CourseError."""
        try:
            response = self.session.request(
                method,
                self.url + path,
                timeout=TIMEOUT,
                allow_redirects=False,
                **kwargs,
            )
        except requests.exceptions.SSLError:
            raise CourseError(
                f"cannot reach {self.url}: its TLS certificate was not accepted"
            ) from None
        except requests.exceptions.Timeout:
            raise CourseError(
                f"cannot reach {self.url}: it did not answer in time"
            ) from None
        except requests.exceptions.RequestException:
            raise CourseError(
                f"cannot reach {self.url}: check the address and your connection"
            ) from None
        if response.status_code in expect:
            self._warn(response)  # a refusal says the same in its own line
            return response
        raise CourseError(self._refusal(response))

    def _warn(self, response: requests.Response) -> None:
        warning = response.headers.get(WARNING_HEADER)
        if warning and not self.warned:
            self.warned = True
            print(f"course: warning: {warning}", file=sys.stderr)

    def _refusal(self, response: requests.Response) -> str:
        code, detail = response.status_code, _detail(response)
        if code == 401:
            return (
                "the server refused your token (expired or revoked): "
                f"run `course login {self.url}` again"
            )
        if code == 413:
            return "your file is over the server's size limit"
        if code == 429:
            what = detail.split(". Expected available")[0] or "too many requests"
            return f"{what.rstrip('.')}: {retry_after(response)}"
        if code in (301, 302, 307, 308):
            return f"{self.url} redirected the client: use the URL it redirects to"
        if code >= 500:
            return f"the server failed (HTTP {code}); try again later"
        return detail or f"the server refused the request (HTTP {code})"

    def json(self, method: str, path: str, **kwargs):
        response = self.call(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise CourseError(
                f"{self.url} did not answer like a course server (no JSON)"
            ) from None
