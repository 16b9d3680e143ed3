"""A real browser for the explorer's tests and screenshots: Debian's headless Chromium
(`/usr/bin/chromium`, installed by `make browser`) driven by Playwright. Playwright's own
browser builds are never downloaded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, ViewportSize, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
# A phone's viewport (CSS pixels), for the explorer's narrow layout.
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


class BrowserMissing(RuntimeError):
    """Debian's Chromium is not installed here."""


@contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Chromium for the length of the block."""
    if not CHROMIUM.exists():
        raise BrowserMissing(f"{CHROMIUM} is missing: `make browser` installs it (apt chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield browser
        finally:
            browser.close()
