"""The dashboard (GET /) in a real browser: Debian's headless Chromium loads it from a running
`uaii serve`, and the test reads the rendered DOM: the figures present, sane (checked against
the server's own /metrics) and updating; a message typed into the chat box and sent, its
streamed reply shown in the log exactly as the server sent it, the counters and the live
tok/s moving with it. A screenshot is left in build/artifacts/dashboard.png.

Driven through Selenium (pinned in requirements/test.txt) and Debian's chromedriver, of the
same version as Debian's chromium: Selenium is the W3C WebDriver client the browser vendors
keep, it waits and finds elements for us, and given both paths it downloads nothing. The
raw DevTools protocol would need a websocket client and hand-written waiting; the one thing
WebDriver cannot see, a response body, comes from DevTools through Selenium's
execute_cdp_cmd."""
import json
import re
import shutil
import struct
import time

import pytest

from conftest import BUILD
from serve_util import ServeProcess

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # a setup problem, not a reason to skip: failed in the fixture
    webdriver = None

PARALLEL = 3  # not the default (1), so #slots shows the flag was read
WINDOW = (1280, 900)
MAX_TOKENS = 24
SCREENSHOT = BUILD / "artifacts" / "dashboard.png"
# The WHATWG windows-1252 decoding, inverted: Python's cp1252 plus the five bytes it leaves
# undefined, which the web maps to the C1 controls of the same number.
WINDOWS_1252_BYTE = {(bytes([b]).decode("cp1252", errors="ignore") or chr(b)): b for b in range(256)}
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_bytes(text: str) -> float:
    """The page's byte figures ("412.3 MiB") back to bytes."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)", text)
    assert m, f"not a byte figure: {text!r}"
    return float(m.group(1)) * UNITS[m.group(2)]


def png_size(data: bytes) -> tuple:
    """(width, height) from a PNG's IHDR chunk; fails on anything that is not a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture()
def chrome(tmp_path):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium chromium-driver)")
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        pytest.fail("chromium is installed but chromedriver is not: apt-get install chromium-driver")
    if webdriver is None:
        pytest.fail("selenium is missing: pip install -r requirements/test.txt")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox",  # the tests run as root
                "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--user-data-dir={tmp_path / 'profile'}", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    # The console (to fail on a script error) and the network log (the chat's response).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def number(driver, element_id: str) -> float:
    return float(text(driver, element_id))


def streamed_content(driver, path: str) -> str:
    """The content deltas of the SSE body the browser received from `path`, joined."""
    responses = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.responseReceived" and message["params"]["response"]["url"].endswith(path):
            responses.append(message["params"])
    assert len(responses) == 1, f"expected one response from {path}, saw {len(responses)}"
    got = driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": responses[0]["requestId"]})
    body = got["body"]
    content_type = {k.lower(): v for k, v in responses[0]["response"]["headers"].items()}.get("content-type", "")
    if not got["base64Encoded"] and "charset" not in content_type:
        # DevTools decodes a text body without a charset as windows-1252, the web's default,
        # though an event stream is UTF-8 by definition (the page's TextDecoder reads it so).
        body = bytes(WINDOWS_1252_BYTE[c] for c in body).decode("utf-8")
    events = [e[len("data: "):] for e in body.split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]", body[-200:]
    chunks = [json.loads(e) for e in events[:-1]]
    return "".join((c["choices"][0]["delta"].get("content") or "") for c in chunks if c["choices"])


def sparkline_peak(driver) -> int:
    """How many pixel rows above its floor the sparkline's stroke reaches: 0 while every
    sample is 0 (a flat line on the bottom), more once one tok/s sample was > 0."""
    return driver.execute_script("""
        const c = document.getElementById("spark"), g = c.getContext("2d");
        const d = g.getImageData(0, 0, c.width, c.height).data;
        for (let y = 0; y < c.height; ++y)
          for (let x = 0; x < c.width; ++x)
            if (d[4 * (y * c.width + x) + 3] > 0) return c.height - 4 - y;
        return 0;""")


def test_dashboard_in_headless_chromium(chrome, uaii_bin, default_model, tmp_path):
    started = time.monotonic()
    server = ServeProcess(uaii_bin, default_model, "--parallel", PARALLEL, "--threads", 2,
                          log_path=tmp_path / "serve.log").wait_listening()
    try:
        # The page is served while the model loads; it turns "ready" once /metrics says so.
        chrome.get(server.url + "/")
        assert chrome.title == "uaii serve"
        wait = WebDriverWait(chrome, 30, poll_frequency=0.1)
        wait.until(lambda d: text(d, "state") == "ready", message="#state never said ready")
        assert "ok" in chrome.find_element(By.ID, "state").get_attribute("class")

        # The figures, each against what the server itself reports.
        metrics = server.metrics()
        assert text(chrome, "model") == default_model.name == "gemma-3-270m-q4_k_m.gguf"
        assert text(chrome, "device") not in ("", "–")
        assert f'uaii_model_info{{model="{default_model.name}",device="{text(chrome, "device")}"}}' in metrics
        rss = parse_bytes(text(chrome, "rss"))
        assert rss > 0 and 0.5 < rss / metrics["uaii_process_resident_memory_bytes"] < 2
        budget = metrics["uaii_memory_budget_bytes"]
        if budget:  # the bar shows RSS's share of it
            assert parse_bytes(text(chrome, "budget")) == pytest.approx(budget, rel=0.01)
            width = chrome.find_element(By.ID, "rss-bar").value_of_css_property("width")
            track = chrome.find_element(By.ID, "rss-bar").find_element(By.XPATH, "..").size["width"]
            assert float(width.removesuffix("px")) / track == pytest.approx(min(1, rss / budget), abs=0.05)
        else:
            assert text(chrome, "budget") == "none"
        pinned = parse_bytes(text(chrome, "pinned"))
        assert pinned == pytest.approx(metrics["uaii_weights_pinned_bytes"], rel=0.01) and pinned > 100e6
        assert parse_bytes(text(chrome, "streamed")) == pytest.approx(metrics["uaii_weights_streamed_bytes"], rel=0.01)
        assert parse_bytes(text(chrome, "kv-bytes")) == pytest.approx(metrics["uaii_kv_cache_bytes"], rel=0.01)
        window = int(metrics["uaii_kv_window"])
        assert text(chrome, "kv-window") == (f"{window} positions" if window else "unbounded")
        assert text(chrome, "expert-hit-rate") == "n/a"  # a dense model: no expert cache
        assert number(chrome, "slots") == PARALLEL
        assert number(chrome, "active") == 0 and number(chrome, "queued") == 0
        assert number(chrome, "tok-s") == 0  # nothing generated yet
        generated0, requests0 = number(chrome, "generated"), number(chrome, "requests")
        assert generated0 == 0

        # It polls /metrics once a second: the refresh counter grows over 3 seconds.
        updates0 = number(chrome, "updates")
        time.sleep(3)
        assert number(chrome, "updates") - updates0 >= 2

        # A chat turn through the page's own form; its reply streams into the log.
        assert sparkline_peak(chrome) <= 0
        # A short cap: the small model, sampled, often rambles to the cap (the page's default,
        # 512, takes half a minute on two busy cores).
        cap = chrome.find_element(By.ID, "max-tokens")
        cap.clear()
        cap.send_keys(str(MAX_TOKENS))
        chrome.find_element(By.ID, "chat-input").send_keys("Name a colour.")
        chrome.find_element(By.ID, "send").click()
        send = chrome.find_element(By.ID, "send")
        assert not send.is_enabled(), "Send stays disabled while the reply streams"
        peak_tok_s, deadline = 0.0, time.monotonic() + 30
        while not send.is_enabled():
            assert time.monotonic() < deadline, "the reply never finished"
            peak_tok_s = max(peak_tok_s, number(chrome, "tok-s"))
            time.sleep(0.2)
        assert not chrome.find_elements(By.CSS_SELECTOR, "#log .msg.error"), text(chrome, "log")
        user, reply = chrome.find_elements(By.CSS_SELECTOR, "#log .msg")
        assert user.text == "you: Name a colour."
        body = reply.find_elements(By.TAG_NAME, "span")[-1].text
        assert body.strip(), "the assistant's reply is empty"
        # What the page shows is what came over the wire (WebDriver's .text trims the ends).
        assert body == streamed_content(chrome, "/v1/chat/completions").strip()

        # The counters follow on the next refreshes; tok/s was > 0 (it covers 5 s, so a
        # reply shorter than one refresh still shows), and the sparkline rose with it.
        wait.until(lambda d: number(d, "generated") == server.metrics()["uaii_generated_tokens_total"] > generated0,
                   message="#generated never caught up with the server's count")
        wait.until(lambda d: number(d, "requests") > requests0, message="#requests never grew")
        deadline = time.monotonic() + 6  # past the figure's 5 s window
        while peak_tok_s == 0 and time.monotonic() < deadline:
            peak_tok_s = max(peak_tok_s, number(chrome, "tok-s"))
            time.sleep(0.2)
        assert peak_tok_s > 0
        assert sparkline_peak(chrome) > 0
        assert 0 < number(chrome, "generated") <= MAX_TOKENS  # the field's cap reached the server
        assert number(chrome, "prompt-tokens") > 0

        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        assert chrome.save_screenshot(str(SCREENSHOT))
        png = SCREENSHOT.read_bytes()
        width, height = png_size(png)  # the viewport: the window less what headless keeps of its frame
        assert width == WINDOW[0] and 0.7 * WINDOW[1] < height <= WINDOW[1], (width, height)
        assert 20_000 < len(png) < 5_000_000, len(png)  # a rendered page, not a blank one
        print(f"dashboard screenshot: {SCREENSHOT}")

        chrome.find_element(By.ID, "reset").click()
        assert not chrome.find_elements(By.CSS_SELECTOR, "#log .msg")

        errors = [e for e in chrome.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        assert server.stop() == 0, server.stderr()
    assert time.monotonic() - started < 60


def test_dashboard_asks_for_the_api_key(chrome, uaii_bin, default_model, tmp_path):
    """With --api-key, /metrics answers 401 until the key is typed into the page's field."""
    server = ServeProcess(uaii_bin, default_model, "--api-key", "sekret", "--threads", 2,
                          log_path=tmp_path / "serve.log").wait_listening()
    try:
        chrome.get(server.url + "/")  # the page itself needs no key
        wait = WebDriverWait(chrome, 30, poll_frequency=0.1)
        wait.until(lambda d: text(d, "state") == "API key needed", message="#state never asked for the key")
        assert "down" in chrome.find_element(By.ID, "state").get_attribute("class")
        assert text(chrome, "model") == "–"  # no figures without the key
        key = chrome.find_element(By.ID, "api-key")
        key.send_keys("sekret")
        chrome.find_element(By.ID, "chat-input").click()  # leaving the field saves the key
        wait.until(lambda d: text(d, "state") == "ready", message="#state never said ready with the key")
        assert text(chrome, "model") == default_model.name
        # Kept for the next visit, as the page promises.
        assert chrome.execute_script('return localStorage.getItem("uaii-api-key")') == "sekret"
        chrome.refresh()
        wait.until(lambda d: text(d, "state") == "ready", message="the key was not kept")
    finally:
        assert server.stop() == 0, server.stderr()
