"""A real LTI 1.3 platform for the tests: an HTTP server on 127.0.0.1.

It has its own RSA keys and JWKS, answers OIDC logins with a signed
id_token (as an auto-posting form, as Canvas and Moodle do), issues OAuth2
client-credentials tokens only for a client assertion signed with a key the
tool publishes at its JWKS URL, and serves AGS line items and scores and an
NRPS roster, recording every request. `fail_scores` makes the next score
posts answer 503, like an LMS that is down; `refuse_scores` answers 400.
`rotate_key` replaces its signing key (as Canvas does every month), and
`lineitem_make` makes a gradebook column the way an LMS assignment whose
submission type is the tool does (its URL goes in launches' `lineitem`).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from html import escape, unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict
    body: object


@dataclass
class Platform:
    client_id: str = "course-tool-client"
    deployment_id: str = "deployment-1"
    context_id: str = "course-101"
    context_title: str = "Transformers 101"
    key: object = field(default_factory=rsa_key)
    kid: str = "platform-key-1"
    requests: list[Recorded] = field(default_factory=list)
    line_items: dict[str, dict] = field(default_factory=dict)
    scores: list[dict] = field(default_factory=list)
    members: list[dict] = field(default_factory=list)
    deep_link_returns: list[dict] = field(default_factory=list)
    tokens: set[str] = field(default_factory=set)
    fail_scores: int = 0
    refuse_scores: bool = False
    tool_jwks_url: str = ""
    # What the next browser login at /auth signs in as (claims() arguments).
    next_login: dict = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None

    # -- lifecycle --------------------------------------------------------

    def start(self) -> Platform:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                platform._handle(self, "GET")

            def do_POST(self):
                platform._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # shutdown() waits for the loop's next poll: 0.5 s by default, after
        # each of the forty-odd tests that start a platform.
        threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    issuer = property(lambda self: self.url)
    auth_url = property(lambda self: self.url + "/auth")
    token_url = property(lambda self: self.url + "/token")
    jwks_url = property(lambda self: self.url + "/jwks")
    lineitems_url = property(lambda self: self.url + f"/{self.context_id}/lineitems")
    memberships_url = property(
        lambda self: self.url + f"/{self.context_id}/memberships"
    )

    # -- what the platform signs ------------------------------------------

    def jwk(self) -> dict:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {**public, "kid": self.kid, "alg": "RS256", "use": "sig"}

    def sign(self, claims: dict, *, key=None, kid: str | None = None) -> str:
        return jwt.encode(
            claims, pem(key or self.key), algorithm="RS256",
            headers={"kid": kid or self.kid},
        )  # fmt: skip

    def claims(
        self, *, sub: str, roles: list[str], nonce: str, message: str = "resource",
        custom: dict | None = None, target_link_uri: str = "", lineitem: str = "",
        **extra,
    ) -> dict:  # fmt: skip
        """A complete, valid id_token body; tests drop or change claims."""
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "aud": self.client_id,
            "sub": sub,
            "exp": now + 300,
            "iat": now,
            "nonce": nonce,
            "name": extra.pop("name", f"User {sub}"),
            "given_name": "User",
            "family_name": sub,
            "email": f"{sub}@lms.example",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": self.deployment_id,
            LTI + "roles": roles,
            LTI + "context": {
                "id": self.context_id,
                "title": self.context_title,
                "label": "TF101",
                "type": [
                    "http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"
                ],
            },
            LTI + "target_link_uri": target_link_uri,
            AGS_CLAIM: {
                "scope": [
                    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                ],
                "lineitems": self.lineitems_url,
            },
            NRPS_CLAIM: {
                "context_memberships_url": self.memberships_url,
                "service_versions": ["2.0"],
            },
        }
        if lineitem:
            body[AGS_CLAIM]["lineitem"] = lineitem
        if message == "resource":
            body[LTI + "message_type"] = "LtiResourceLinkRequest"
            body[LTI + "resource_link"] = {
                "id": extra.pop("link_id", "link-1"),
                "title": "A link",
            }
        else:
            body[LTI + "message_type"] = "LtiDeepLinkingRequest"
            body[DL_SETTINGS] = {
                "deep_link_return_url": self.url + "/deep-link-return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": True,
                "data": "opaque-platform-data",
            }
        if custom is not None:
            body[LTI + "custom"] = custom
        body.update(extra)
        return body

    def rotate_key(self) -> None:
        """A new signing key with a new kid; the JWKS now lists only it."""
        self.key = rsa_key()
        self.kid = f"platform-key-{uuid.uuid4().hex[:8]}"

    @property
    def jwks_fetches(self) -> int:
        return sum(1 for r in self.requests if r.path == "/jwks")

    def lineitem_make(self, label: str, resource_link_id: str) -> str:
        """A column the LMS made itself; its URL is Moodle-shaped (a query)."""
        item_id = uuid.uuid4().hex[:12]
        url = f"{self.lineitems_url}/{item_id}?type_id=1"
        self.line_items[item_id] = {
            "id": url, "label": label, "scoreMaximum": 10,
            "resourceLinkId": resource_link_id,
        }  # fmt: skip
        return url

    def scores_at(self, url: str) -> list[dict]:
        item_id = urlsplit(url).path.rstrip("/").rsplit("/", 1)[1]
        return [s for s in self.scores if s["lineitem"] == item_id]

    # -- the browser's side of a launch -----------------------------------

    def launch(self, browser: requests.Session, tool: str, *, edit=None, **claim_args):
        """Run login -> auth -> launch as a browser would; the launch's response.

        `edit(claims) -> claims or (claims, token)` tampers with the id_token.
        """
        login = browser.get(
            tool + "/lti/login/",
            params={
                "iss": self.issuer,
                "login_hint": claim_args["sub"],
                "target_link_uri": tool + "/lti/launch/",
                "client_id": self.client_id,
                "lti_deployment_id": self.deployment_id,
            },
            allow_redirects=False,
        )
        assert login.status_code == 302, login.text[:500]
        auth = urlsplit(login.headers["Location"])
        assert f"{auth.scheme}://{auth.netloc}{auth.path}" == self.auth_url
        params = {k: v[0] for k, v in parse_qs(auth.query).items()}
        body = self.claims(nonce=params["nonce"], **claim_args)
        token = None
        if edit is not None:
            edited = edit(body)
            body, token = edited if isinstance(edited, tuple) else (edited, None)
        form = {"id_token": token or self.sign(body), "state": params["state"]}
        assert params["redirect_uri"] == tool + "/lti/launch/"
        return browser.post(
            params["redirect_uri"], data=form, allow_redirects=False
        ), form

    # -- HTTP -------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode() if length else ""
        ctype = handler.headers.get("Content-Type", "")
        if "json" in ctype and raw:
            body = json.loads(raw)
        elif raw:
            body = {k: v[0] for k, v in parse_qs(raw).items()}
        else:
            body = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.requests.append(Recorded(method, parts.path, dict(handler.headers), body))
        status, payload, content_type = self._route(method, parts.path, body, handler)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _authorized(self, handler) -> bool:
        auth = handler.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in self.tokens

    def _route(self, method, path, body, handler):
        if path == "/jwks":
            return 200, {"keys": [self.jwk()]}, "application/json"
        if path == "/auth" and method == "GET":
            return self._auth(body)
        if path == "/token" and method == "POST":
            return self._token(body)
        if path == "/deep-link-return" and method == "POST":
            claims = self._verify_tool_jwt(body.get("JWT", ""), audience=self.issuer)
            self.deep_link_returns.append(claims)
            return 200, b"<p>links received</p>", "text/html"
        if not self._authorized(handler):
            return 401, {"error": "invalid token"}, "application/json"
        if path == urlsplit(self.lineitems_url).path:
            return self._lineitems(method, body)
        match = re.fullmatch(rf"/{self.context_id}/lineitems/(\w+)/scores", path)
        if match and method == "POST":
            if self.refuse_scores:
                return 400, {"error": "no such user in this course"}, "application/json"
            if self.fail_scores > 0:
                self.fail_scores -= 1
                return 503, {"error": "down for maintenance"}, "application/json"
            if match.group(1) not in self.line_items:
                return 404, {"error": "no such line item"}, "application/json"
            self.scores.append({**body, "lineitem": match.group(1)})
            return 204, b"", "application/json"
        if path == urlsplit(self.memberships_url).path:
            return (
                200,
                {
                    "id": self.memberships_url,
                    "context": {"id": self.context_id, "title": self.context_title},
                    "members": self.members,
                },
                "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
            )
        return 404, {"error": "not found"}, "application/json"

    def _auth(self, params):
        """The OIDC authorization step a browser goes through: an auto-posting
        form with the signed id_token, as Canvas and Moodle answer."""
        if params.get("client_id") != self.client_id or not params.get("nonce"):
            return 400, {"error": "invalid_request"}, "application/json"
        token = self.sign(self.claims(nonce=params["nonce"], **self.next_login))
        page = (
            f'<form id="f" method="post" action="{escape(params["redirect_uri"])}">'
            f'<input type="hidden" name="id_token" value="{token}">'
            f'<input type="hidden" name="state" value="{escape(params["state"])}">'
            "</form><script>document.getElementById('f').submit()</script>"
        )
        return 200, page.encode(), "text/html"

    def _lineitems(self, method, body):
        if method == "GET":
            items = list(self.line_items.values())
            wanted = body.get("resource_id")
            if wanted:
                items = [i for i in items if i.get("resourceId") == wanted]
            return 200, items, "application/vnd.ims.lis.v2.lineitemcontainer+json"
        item_id = uuid.uuid4().hex[:12]
        item = {**body, "id": f"{self.lineitems_url}/{item_id}"}
        self.line_items[item_id] = item
        return 201, item, "application/vnd.ims.lis.v2.lineitem+json"

    def _verify_tool_jwt(self, token: str, *, audience: str) -> dict:
        keys = requests.get(self.tool_jwks_url, timeout=10).json()["keys"]
        kid = jwt.get_unverified_header(token).get("kid")
        jwk = next(k for k in keys if k["kid"] == kid)
        public = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(jwk))
        return jwt.decode(token, public, algorithms=["RS256"], audience=audience)

    def _token(self, body):
        try:
            assert body["grant_type"] == "client_credentials"
            assert body["client_assertion_type"].endswith("jwt-bearer")
            claims = self._verify_tool_jwt(
                body["client_assertion"], audience=self.token_url
            )
            assert claims["iss"] == claims["sub"] == self.client_id
        except Exception as exc:  # noqa: BLE001 - any flaw is a refusal
            return (
                401,
                {"error": "invalid_client", "detail": str(exc)},
                "application/json",
            )
        token = secrets.token_urlsafe(16)
        self.tokens.add(token)
        return 200, {
            "access_token": token, "token_type": "Bearer", "expires_in": 3600,
            "scope": body.get("scope", ""),
        }, "application/json"  # fmt: skip


def auto_post_form(html: str) -> tuple[str, dict]:
    """(action, fields) of the page's form that carries a JWT, as a browser
    would submit it."""
    for form in re.findall(r"<form\b.*?</form>", html, flags=re.S):
        if 'name="JWT"' not in form:
            continue
        action = unescape(re.search(r'action="([^"]*)"', form).group(1))
        inputs = re.findall(r'<input[^>]*name="([^"]*)"[^>]*value="([^"]*)"', form)
        return action, {unescape(n): unescape(v) for n, v in inputs}
    raise AssertionError("no form with a JWT on the page")
