"""In Debian's Chromium: an LMS launches the tool as a browser does.

The platform's authorization page auto-posts the signed id_token; an
instructor's Deep Linking launch lands on the picker, whose choice goes back
to the LMS by the page's own script (the Content-Security-Policy lets that
form post to the platform and nowhere else); a learner's link opens the
exercise, signed in.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.lms.platform import INSTRUCTOR, LEARNER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def login_url(platform, tool: str, sub: str) -> str:
    return (
        tool
        + "/lti/login/?"
        + urlencode(
            {
                "iss": platform.issuer,
                "login_hint": sub,
                "target_link_uri": tool + "/lti/launch/",
                "client_id": platform.client_id,
            }
        )
    )


def test_deep_linking_and_a_learner_launch_in_chromium(
    browser,
    platform,
    tool,
    block_exercise,
):
    page = browser.new_page()
    platform.next_login = {"sub": "t-1", "roles": [INSTRUCTOR], "message": "deep-link"}
    page.goto(login_url(platform, tool, "t-1"))
    page.wait_for_url("**/lti/deep-link/?launch=*")
    assert "Add to Transformers 101" in page.text_content("h1")
    page.check("input[value='exercise:block-param-count']")
    page.click("text=Add to course")
    page.wait_for_url(platform.url + "/deep-link-return")
    assert "links received" in page.content()
    (returned,) = platform.deep_link_returns
    (item,) = returned["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["custom"] == {"resource": "exercise:block-param-count"}

    learner = browser.new_context().new_page()
    platform.next_login = {"sub": "s-1", "roles": [LEARNER], "custom": item["custom"]}
    learner.goto(login_url(platform, tool, "s-1"))
    learner.wait_for_url(tool + "/exercises/block-param-count/")
    assert "Signed in as" in learner.text_content("header")
    assert "Count one block" in learner.content()
