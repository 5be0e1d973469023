"""The site-wide Content-Security-Policy for HTML pages.

Scripts come only from this site's own files (no inline script, no eval), so
an injected <script> or onclick= never runs. Inline styles stay allowed:
CodeMirror, Chart.js and htmx insert <style> elements at run time. A view
that sets its own policy (the figure SVGs, stricter still) keeps it.

Here, below every app, so that config's middleware (config.csp) sends it on
every page and a view that must loosen one directive (lms.views, framed by
the LMS) builds its header from the same policy.
"""

from __future__ import annotations

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy_header(**overrides: str) -> str:
    """The policy as a header value; `overrides` use underscores for dashes."""
    policy = {**POLICY, **{k.replace("_", "-"): v for k, v in overrides.items()}}
    return "; ".join(f"{name} {value}" for name, value in policy.items())


HEADER = policy_header()
