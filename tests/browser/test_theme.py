"""The dark theme in Debian's Chromium: it follows the system, and the
light / dark / system toggle is remembered across reloads (issue 19)."""

from __future__ import annotations

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

DARK_BG = "rgb(13, 17, 23)"
LIGHT_BG = "rgb(255, 255, 255)"
BACKGROUND = "() => getComputedStyle(document.body).backgroundColor"


def test_pages_are_dark_when_the_system_is(browser, live_server):
    page = browser.new_context(color_scheme="dark").new_page()
    page.goto(live_server.url + "/accounts/login/")
    assert page.evaluate(BACKGROUND) == DARK_BG
    assert page.locator("#theme-choice").input_value() == "system"


def test_the_toggle_is_remembered_across_reloads(browser, live_server):
    page = browser.new_context(color_scheme="light").new_page()
    page.goto(live_server.url + "/accounts/login/")
    assert page.evaluate(BACKGROUND) == LIGHT_BG
    page.select_option("#theme-choice", "dark")
    assert page.evaluate(BACKGROUND) == DARK_BG

    page.reload()
    assert page.evaluate(BACKGROUND) == DARK_BG
    assert page.input_value("#theme-choice") == "dark"
    # Set from <head> before the body is parsed, so there is no light flash.
    assert page.evaluate(
        "() => !!document.querySelector("
        "'head script[src*=\"theme.js\"]:not([defer]):not([async])')"
    )

    page.select_option("#theme-choice", "system")
    page.reload()
    assert page.evaluate(BACKGROUND) == LIGHT_BG
    assert page.input_value("#theme-choice") == "system"


def test_the_toggle_is_hidden_without_javascript(browser, live_server):
    page = browser.new_context(java_script_enabled=False).new_page()
    page.goto(live_server.url + "/accounts/login/")
    assert page.locator(".theme-switch").is_hidden()
