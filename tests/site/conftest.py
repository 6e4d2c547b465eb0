"""Fixtures for testing the built website as a reader meets it: in a headless browser with no network."""

import json
import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").exists():
        message = "the website is not built: run bash tools/build.sh first"
        if os.environ.get("ATTNLIB_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)
    return SITE


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Render a page in headless Chromium with no network; return (DOM after scripts ran, console log)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("chromium is not installed (tools/test.sh installs Debian's package)")
    offline = ["unshare", "-n"] if shutil.which("unshare") else []

    def render(page: Path, window: tuple[int, int] | None = None) -> tuple[str, str]:
        profile = tmp_path_factory.mktemp("chromium-profile")
        command = offline + [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=8000",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            *([f"--window-size={window[0]},{window[1]}"] if window else []),
            page.as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout, done.stderr

    return render


@pytest.fixture(scope="session")
def run_in_page(browser):
    """Render ``html`` saved as ``page`` with ``script`` injected before ``</body>``; return the JSON that the
    script writes into ``<div id="{result_id}">`` (a div: the theme rewrites <pre> elements). Save the copy
    beside the real page, so that its relative assets load; it is removed afterwards."""

    def run(page: Path, html: str, script: str, result_id: str, window: tuple[int, int] | None = None):
        page.write_text(html.replace("</body>", script + "</body>", 1))
        try:
            dom, console = browser(page, window)
        finally:
            page.unlink()
        found = re.search(rf'<div id="{result_id}"[^>]*>(.*?)</div>', dom, re.S)
        assert found, f"the injected script did not run: a script error on the page?\n{console[-2000:]}"
        return json.loads(unescape(found[1]))

    return run
