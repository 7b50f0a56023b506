"""The profiler page in a real headless Chromium (selenium + chromium-driver) over a running
``barkbus live --demo skate --no-audio --profiler``: the demo's decisions and voices appear, an
action sent from the page's form reaches the engine (its decision comes back), and the
screenshot is not blank."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None, reason="needs Debian's chromium and chromium-driver"
    ),
]
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def chrome(profile: str) -> Any:
    """A headless Chromium driven by selenium (skips when selenium is not installed)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for f in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(f)
    return webdriver.Chrome(service=Service(str(DRIVER)), options=opts)


@pytest.fixture
def live_demo() -> Iterator[str]:
    """``barkbus live --demo skate --no-audio --profiler`` running; yields the page's URL."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "audio",
        "live",
        "--demo",
        "skate",
        "--no-audio",
        "--profiler",
        "--seconds",
        "90",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            if line.startswith("profiler: "):
                url = line.split()[1]
                break
        assert url.startswith("http://127.0.0.1:"), f"no profiler URL printed (exit {proc.poll()})"
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def texts(driver: Any, selector: str) -> list[str]:
    """The text of every element matching ``selector``, read in one script (rows that the page
    replaces between two reads cannot go stale)."""
    script = "return [...document.querySelectorAll(arguments[0])].map((e) => e.innerText).filter((t) => t)"
    return list(driver.execute_script(script, selector))


def wait_for(what: str, check: Any, timeout: float = 40.0) -> Any:
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_page_shows_the_demo_and_sends_an_action(live_demo: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with tempfile.TemporaryDirectory() as profile:
        driver = chrome(profile)
        try:
            driver.get(live_demo)
            wait_for("the connection", lambda: driver.find_element(By.ID, "conn").text == "connected")
            # the table's spacer rows (virtualised scrolling) exist before the first decision does
            wait_for(
                "the demo's decisions",
                lambda: [t for t in texts(driver, "#decisions tbody tr") if "skate.speech" in t],
            )
            voice = wait_for(
                "a voice of the demo",
                lambda: [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#voices tbody tr") if r.text],
            )
            # a Skate clip name of the demo install (bank, line and name: "501_59_busm1_Warn_n");
            # which clip is listed first depends on when the page connected
            assert any(re.search(r"\b\d{3}_\d+_\w+", v) for v in voice), voice
            assert wait_for(
                "the master meter", lambda: driver.find_elements(By.CSS_SELECTOR, "#buses .master")
            )
            assert wait_for(
                "a game panel", lambda: "skate.speech" in driver.find_element(By.ID, "panels").text
            )

            # an action from the form: a speech value for a ped that was never spawned
            Select(driver.find_element(By.ID, "action-name")).select_by_value("skate/value")
            driver.find_element(By.CSS_SELECTOR, '#action-params input[name="ped"]').send_keys("4242")
            driver.find_element(By.CSS_SELECTOR, '#action-params input[name="value"]').send_keys("53")
            driver.find_element(By.ID, "action-send").click()
            wait_for("the action's result", lambda: "sent" in driver.find_element(By.ID, "result").text)
            driver.find_element(By.ID, "f-speaker").send_keys("4242")
            answer = wait_for(
                "the engine's decision on the sent action",
                lambda: [
                    r.text for r in driver.find_elements(By.CSS_SELECTOR, "#decisions tbody tr") if r.text
                ],
            )
            assert "UnknownPed" in answer[0]

            png = driver.get_screenshot_as_png()
        finally:
            driver.quit()
    import matplotlib.image as mpimg

    img = mpimg.imread(io.BytesIO(png), format="png")[..., :3]
    assert img.shape[0] >= 500 and img.shape[1] >= 800
    colours = np.unique((img.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    assert len(colours) > 50, "the screenshot is (nearly) one colour"
    assert float(img.std()) > 0.05
