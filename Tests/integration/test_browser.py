"""carrel-browser, the exam browser for web exams, against the real binaries.

Carrel starts carrel-browser as its exam app; a local HTTP server on
127.0.0.1 plays the LMS: it serves the .seb file (fetched through a seb://
link), a quiz page and a page outside the filter, and records every request
with its headers. The tests judge what left the browser (the requests, their
X-SafeExamBrowser-ConfigKeyHash), what the page saw (window.SafeExamBrowser,
which the page posts back), what carrel-browser printed, and what Carrel
recorded (the audit log).

WebKit's web process runs in its bubblewrap sandbox here as on an exam
machine: carrel-browser names Carrel's app socket relative to XDG_RUNTIME_DIR,
where the sandbox looks for it; the headers prove the extension loads there.
GSK_RENDERER=cairo and WEBKIT_DISABLE_COMPOSITING_MODE=1 keep GTK and WebKit
off GL: Carrel's headless test output renders with pixman, and GTK's GL
renderer aborts without GL.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socketserver
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import carrel_harness as h
from audit_log import audit_story
from carrel_clients import Ctl, lines

BROWSER_ENV = ["GDK_BACKEND=wayland", "GSK_RENDERER=cairo", "WEBKIT_DISABLE_COMPOSITING_MODE=1"]
NAME = "carrel-browser"
# WebKit's first page takes a few seconds on a loaded two-core machine.
PAGE_TIMEOUT = 30.0


@pytest.fixture(scope="session")
def browser_bin() -> Path:
    path = Path(os.environ.get("CARREL_BROWSER_BIN", h.REPO / ".build" / "debug" / "carrel-browser"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"carrel-browser not found at {path}: install libwebkitgtk-6.0-dev (meson-helpers/packages.sh) "
                    "and run `swift build`, or set CARREL_BROWSER_BIN (test-all does)")
    extension = path.parent / "libCarrelBrowserExtension.so"
    if "CARREL_BROWSER_EXTENSION" not in os.environ and not extension.is_file():
        pytest.fail(f"the web process extension is not beside carrel-browser ({extension}); "
                    "run `swift build --product CarrelBrowserExtension`")
    return path


class LMS:
    """A stand-in for Moodle on 127.0.0.1: pages by path, every request recorded."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.reports: list[dict] = []
        self.pages: dict[str, bytes] = {}
        # A login, as an LMS keeps one: the path that sets the cookie, and
        # the paths served only to a request that carries it (403 otherwise).
        self.cookie_setters: dict[str, str] = {}
        self.logged_in_only: dict[str, str] = {}
        self.lock = threading.Lock()
        lms = self

        class Handler(BaseHTTPRequestHandler):
            def record(self, body: bytes = b"") -> None:
                with lms.lock:
                    lms.requests.append({"method": self.command, "path": self.path, "body": body,
                                         "headers": {k.lower(): v for k, v in self.headers.items()}})
                    if self.path == "/report":
                        lms.reports.append(json.loads(body))

            def do_GET(self) -> None:
                self.record()
                path = self.path.split("?")[0]
                page = lms.pages.get(path)
                if path in lms.logged_in_only and lms.logged_in_only[path] not in self.headers.get("Cookie", ""):
                    page = None
                    self.send_response(403)
                else:
                    self.send_response(200 if page is not None else 404)
                data = page if page is not None else b"not found"
                if path in lms.cookie_setters:
                    self.send_header("Set-Cookie", lms.cookie_setters[path] + "; Path=/; HttpOnly")
                if path.endswith(".bin"):   # a file to save, as an LMS serves one
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Disposition", 'attachment; filename="answers.bin"')
                else:
                    self.send_header("Content-Type", "application/seb" if path.endswith(".seb") else "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.record(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def paths(self) -> list[str]:
        with self.lock:
            return [r["path"] for r in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def lms():
    server = LMS()
    yield server
    server.close()


def seb_xml(lms: LMS, start: str = "/quiz.html", quit_confirm: bool | None = False,
            content_filter: bool | None = None, rules: list[tuple[int, str, bool]] = (), extra: str = "") -> str:
    """The exam's configuration: start page, quit URL (quitting at once unless
    `quit_confirm`; None leaves the key out), a filter allowing the quiz and
    the report only, and `rules` ((action, expression, regex)) after those;
    `content_filter` sets URLFilterEnableContentFilter (None leaves it out);
    `extra` is more keys, as plist XML."""
    def flag(key: str, value: bool | None) -> str:
        return "" if value is None else f"  <key>{key}</key><{'true' if value else 'false'}/>\n"

    def rule(action: int, expression: str, regex: bool) -> str:
        return (f"    <dict><key>action</key><integer>{action}</integer><key>active</key><true/>\n"
                f"      <key>expression</key><string>{expression}</string><key>regex</key><{str(regex).lower()}/></dict>\n")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>startURL</key><string>{lms.base}{start}</string>
  <key>quitURL</key><string>{lms.base}/quit</string>
{flag("quitURLConfirm", quit_confirm)}  <key>URLFilterEnable</key><true/>
{flag("URLFilterEnableContentFilter", content_filter)}  <key>URLFilterRules</key>
  <array>
{rule(1, "127.0.0.1/quiz*", False)}{rule(1, "127.0.0.1/report", False)}{"".join(rule(*r) for r in rules)}  </array>
  <key>allowSiri</key><false/>
  <key>originatorVersion</key><string>SEB_Win_3.7.0</string>
{extra}</dict>
</plist>
"""


def expected_config_key(lms: LMS, start: str = "/quiz.html") -> str:
    """The Config Key of seb_xml, written out by hand as Moodle serialises it
    (keys in root collation order, originatorVersion gone, no whitespace)."""
    rule = '{{"action":1,"active":true,"expression":"{}","regex":false}}'
    text = ('{"allowSiri":false,"quitURL":"' + lms.base + '/quit","quitURLConfirm":false,"startURL":"' + lms.base + start + '",'
            '"URLFilterEnable":true,"URLFilterRules":[' + rule.format("127.0.0.1/quiz*") + ","
            + rule.format("127.0.0.1/report") + "]}")
    return hashlib.sha256(text.encode()).hexdigest()


def url_hash(url: str, key: str) -> str:
    return hashlib.sha256((url.split("#")[0] + key).encode()).hexdigest()


# The quiz page: reads window.SafeExamBrowser in its first script (before any
# other runs), tries to forge and replace it, asks updateKeys for fresh values,
# posts all of it back, then goes where `then` says.
QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title><script>
(function () {
  var s = window.SafeExamBrowser, out = {present: typeof s, href: location.href};
  if (s) {
    out.configKey = s.security.configKey;
    out.browserExamKey = s.security.browserExamKey;
    out.appVersion = s.security.appVersion;
    try { s.security.configKey = "forged"; } catch (e) {}
    out.afterForge = s.security.configKey;
    try { window.SafeExamBrowser = {security: {configKey: "forged"}}; } catch (e) {}
    out.replaced = window.SafeExamBrowser !== s;
    out.members = Object.keys(s.security).join(" ");
  }
  window.report = out;
})();
</script></head><body style="background:#fff"><h1>Question 1: what is 6 x 7?</h1>
<iframe name="side" src="/elsewhere-frame.html"></iframe>
<iframe srcdoc="<p>an editor's own frame</p>"></iframe>
<script>
window.SafeExamBrowser.security.updateKeys(function () {
  window.report.updated = window.SafeExamBrowser.security.configKey;
  fetch("/report", {method: "POST", body: JSON.stringify(window.report)}).then(function () {
    setTimeout(function () { location.href = "THEN"; }, 300);
  });
});
</script></body></html>"""


def start_browser(carrel, browser_bin: Path, lms: LMS, then: str, extra: list[str] = (), **start) -> h.Carrel:
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = QUIZ.replace("THEN", then).encode()
    lms.pages["/elsewhere.html"] = b"<h1>must never be fetched</h1>"
    lms.pages["/elsewhere-frame.html"] = b"<h1>must never be fetched</h1>"
    link = f"seb://127.0.0.1:{lms.port}/exam.seb"
    return carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), *extra, link], wait_ready=False, **start)


def test_the_exam_loads_only_after_began_proves_its_configuration_and_the_quit_url_ends_it(carrel, browser_bin, lms):
    """The whole story of a web exam: the .seb fetched through a seb:// link,
    the session begun before the quiz is requested, the header on every
    request, the JavaScript API's per-page values in place for the page's first
    script and immune to the page, a frame outside the filter never
    requested, and the quit URL (never requested either) ending the session."""
    c = start_browser(carrel, browser_bin, lms, then="/quit")
    status = c.wait_exit(timeout=PAGE_TIMEOUT)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"

    key = expected_config_key(lms)
    keys = subprocess.run([str(browser_bin), "--keys", f"seb://127.0.0.1:{lms.port}/exam.seb"],
                          capture_output=True, text=True, timeout=30)
    assert f"Config Key: {key}" in keys.stdout, f"carrel-browser --keys disagrees with Moodle's key {key}:\n{keys.stdout}"
    exam_key = next(line.split(": ")[-1] for line in keys.stdout.splitlines() if line.startswith("Browser Exam Key"))

    assert got[:3] == ["locking", "event began", f"loading {lms.base}/quiz.html"], f"lines {got}"
    assert f"blocked {lms.base}/elsewhere-frame.html" in got, f"lines {got}"
    assert not any(line.startswith("blocked about:") for line in got), f"a page's own frame was blocked: {got}"
    assert f"quit URL {lms.base}/quit" in got and got[-1] == "event ended", f"lines {got}"
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}\n{c.evidence()}"

    paths = lms.paths()
    assert paths[0] == "/exam.seb" and "/quiz.html" in paths and "/report" in paths, f"requests {paths}"
    for forbidden in ("/elsewhere-frame.html", "/quit"):
        assert forbidden not in paths, f"{forbidden} left the machine: requests {paths}"
    for request in lms.requests:
        if request["path"] == "/exam.seb":   # fetched before any key exists (and again by --keys)
            continue
        url = lms.base + request["path"]
        assert request["headers"].get("x-safeexambrowser-configkeyhash") == url_hash(url, key), \
            f"{request['path']}: header {request['headers'].get('x-safeexambrowser-configkeyhash')}"
        assert request["headers"].get("x-safeexambrowser-requesthash") == url_hash(url, exam_key), request["path"]
        assert "SEB" in request["headers"].get("user-agent", ""), request["headers"].get("user-agent")

    assert len(lms.reports) == 1, f"reports {lms.reports}"
    seen = lms.reports[0]
    page = f"{lms.base}/quiz.html"
    assert seen["present"] == "object" and seen["href"] == page, seen
    assert seen["configKey"] == url_hash(page, key) == seen["updated"] == seen["afterForge"], seen
    assert seen["browserExamKey"] == url_hash(page, exam_key), seen
    assert seen["appVersion"].startswith("carrel-browser"), seen
    assert seen["replaced"] is False and seen["members"] == "configKey browserExamKey appVersion updateKeys", seen
    assert key not in json.dumps(seen) and exam_key not in json.dumps(seen), "a raw key reached the page"


def test_a_page_outside_the_filter_gets_carrels_refusal_and_an_interruption_hides_the_exam(
        carrel, browser_bin, lms, carrelctl, control_dir, logdir, logs):
    """The quiz navigates its main frame outside the filter: the request never
    leaves, Carrel's refusal shows above the quiz; an administrator's interruption then
    hides the exam and the session ends."""
    socket = control_dir / "control.sock"
    c = start_browser(carrel, browser_bin, lms, then="/elsewhere.html", args=["--control-socket", str(socket)])
    assert h.wait_until(lambda: f"blocked {lms.base}/elsewhere.html" in lines(c.stdout_path, NAME), PAGE_TIMEOUT), \
        f"the blocked navigation never happened: {lines(c.stdout_path, NAME)}\n{c.evidence()}"
    assert f"refusal shown for {lms.base}/elsewhere.html" in lines(c.stdout_path, NAME), \
        f"no refusal shown: {lines(c.stdout_path, NAME)}"
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert c.wait_exit() == 0, c.evidence()
    got = lines(c.stdout_path, NAME)
    assert got[-3:] == ["event interrupted administrative fire alarm", "content hidden", "event ended"], f"lines {got}"
    assert "/elsewhere.html" not in lms.paths() and "/elsewhere-frame.html" not in lms.paths(), lms.paths()
    assert audit_story(c) == ["begin", "began", "interrupted administrative", "ended"], f"audit {audit_story(c)}"


# A quiz with a frame outside the filter: once the frame shows a document
# (Carrel's refusal, if it is put there) the page posts the frame's title and
# text, and whether its own content is still there, then leaves.
FRAME_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title></head>
<body><h1 id="q">Question 1</h1><iframe id="side" src="/elsewhere-frame.html"></iframe><script>
var tries = 0;
(function wait() {
  var doc = null;
  try { doc = document.getElementById("side").contentDocument; } catch (e) {}
  var text = doc && doc.body ? doc.body.innerText : "";
  if (text.indexOf("Carrel") < 0 && ++tries < 100) return setTimeout(wait, 100);
  fetch("/report", {method: "POST", body: JSON.stringify({title: doc ? doc.title : null, text: text,
      question: document.getElementById("q").textContent})}).then(function () { location.href = "/quit"; });
})();
</script></body></html>"""


def test_a_blocked_frame_shows_carrels_refusal_in_its_place(carrel, browser_bin, lms):
    """A frame outside the filter is never requested, and Carrel's refusal
    shows in place of the frame (the frame's own document, which the page
    reads back), not above the page; the page around it stays."""
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = FRAME_QUIZ.encode()
    lms.pages["/elsewhere-frame.html"] = b"<h1>must never be fetched</h1>"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT * 2)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    frame = f"{lms.base}/elsewhere-frame.html"
    assert "/elsewhere-frame.html" not in lms.paths(), lms.paths()
    assert f"blocked {frame}" in got, f"lines {got}"
    assert f"refusal shown in place of the frame for {frame}" in got, f"lines {got}"
    assert f"refusal shown for {frame}" not in got, f"the refusal showed above the page: {got}"
    assert len(lms.reports) == 1, f"reports {lms.reports}; lines {got}"
    report = lms.reports[0]
    assert report["title"] == "Blocked" and "Carrel blocked this frame" in report["text"] \
        and frame in report["text"], report
    assert report["question"] == "Question 1", report


def test_outside_carrels_exam_role_it_refuses_to_show_the_exam_unless_told_it_is_a_test_run(carrel, browser_bin, lms):
    """As an ordinary client (no session offered) carrel-browser says why and
    requests nothing of the exam; with --test-run it shows the exam, marked."""
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = b"<h1>Quiz</h1>"
    c = carrel.start()
    link = f"seb://127.0.0.1:{lms.port}/exam.seb"
    refused = c.client(["env", *BROWSER_ENV, str(browser_bin), link], name="refused")
    assert h.wait_until(lambda: any(line.startswith("refused: not inside Carrel")
                                    for line in lines(refused.stdout_path, NAME)), PAGE_TIMEOUT), \
        f"{lines(refused.stdout_path, NAME)}\n{refused.stderr()[-3000:]}"
    time.sleep(1.0)
    assert lms.paths() == ["/exam.seb"], f"the exam was requested outside a session: {lms.paths()}"
    os.kill(refused.pid, signal.SIGTERM)
    refused.wait_exit()

    test_run = c.client(["env", *BROWSER_ENV, str(browser_bin), "--test-run", link], name="test-run")
    assert h.wait_until(lambda: f"loaded {lms.base}/quiz.html" in lines(test_run.stdout_path, NAME), PAGE_TIMEOUT), \
        f"{lines(test_run.stdout_path, NAME)}\n{test_run.stderr()[-3000:]}"
    assert any(line.startswith("test run: not locked") for line in lines(test_run.stdout_path, NAME))
    # With a socket path the web process is sandboxed, and the extension still speaks for it.
    quiz = [r for r in lms.requests if r["path"] == "/quiz.html"]
    assert quiz and quiz[0]["headers"].get("x-safeexambrowser-configkeyhash") == \
        url_hash(lms.base + "/quiz.html", expected_config_key(lms)), quiz
    os.kill(test_run.pid, signal.SIGTERM)
    test_run.wait_exit()


def test_bad_configurations_are_clear_errors_and_explain_lists_what_is_kept(browser_bin, tmp_path):
    """Without a display: garbage, a missing start URL, a truncated file, a
    regex rule outside the dialect ICU and PCRE share, a missing password
    file and a missing web process extension each end with a message saying
    what to do; --explain lists unknown keys."""
    def run(*args) -> subprocess.CompletedProcess:
        return subprocess.run([str(browser_bin), *map(str, args)], capture_output=True, text=True, timeout=30)

    garbage = tmp_path / "garbage.seb"
    garbage.write_bytes(b"\x00\x01 not a configuration")
    r = run(garbage)
    assert r.returncode == 65 and "not an SEB configuration" in r.stderr, r.stderr
    nostart = tmp_path / "nostart.seb"
    nostart.write_text('<?xml version="1.0"?><plist version="1.0"><dict><key>allowQuit</key><true/></dict></plist>')
    r = run(nostart)
    assert r.returncode == 65 and "startURL" in r.stderr, r.stderr
    truncated = tmp_path / "truncated.seb"
    truncated.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00")
    r = run(truncated)
    assert r.returncode == 65 and "download the .seb file again" in r.stderr, r.stderr
    unknown = tmp_path / "unknown.seb"
    unknown.write_text('<?xml version="1.0"?><plist version="1.0"><dict><key>startURL</key>'
                       '<string>https://exam.example.org/</string><key>zzFutureSetting</key><integer>3</integer>'
                       '</dict></plist>')
    r = run("--explain", unknown)
    assert r.returncode == 0 and "zzFutureSetting = 3" in r.stdout and "Config Key: " in r.stdout, r.stdout
    # A regex rule the browser (ICU) and its web process (PCRE) would read differently stops it, naming the rule.
    two_ways = tmp_path / "two-ways.seb"
    two_ways.write_text('<?xml version="1.0"?><plist version="1.0"><dict><key>startURL</key>'
                        '<string>https://exam.example.org/</string><key>URLFilterEnable</key><true/>'
                        '<key>URLFilterRules</key><array><dict><key>action</key><integer>1</integer>'
                        '<key>expression</key><string>^https://exam\\.example\\.org/\\Qa.b\\E</string>'
                        '<key>regex</key><true/></dict></array></dict></plist>')
    r = run(two_ways)
    assert r.returncode == 65 and "URLFilterRules[0]" in r.stderr and "\\Q" in r.stderr, r.stderr
    r = run("--password-file", tmp_path / "missing", unknown)
    assert r.returncode == 65 and "password file" in r.stderr, r.stderr
    r = subprocess.run([str(browser_bin), str(unknown)], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "CARREL_BROWSER_EXTENSION": str(tmp_path / "none.so")})
    assert r.returncode == 69 and "libCarrelBrowserExtension.so was not found" in r.stderr, r.stderr


def test_the_kiosk_drop_in_is_the_kiosk_unit_with_carrel_browser_as_its_app():
    """dist/carrel-kiosk-browser.conf: clears ExecStart and sets the shipped
    unit's own command line, only the app replaced by carrel-browser."""
    import shlex
    unit = (h.REPO / "dist" / "carrel-kiosk.service").read_text()
    drop_in = (h.REPO / "dist" / "carrel-kiosk-browser.conf").read_text()
    shipped = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStart=")]
    ours = [line.split("=", 1)[1] for line in drop_in.splitlines() if line.startswith("ExecStart=")]
    assert len(shipped) == 1 and ours[0] == "" and len(ours) == 2, ours
    carrel_part, _, app = shlex.join(shlex.split(ours[1])).partition(" -- /usr/bin/env ")
    assert shlex.split(shipped[0])[-2] == "--" and shlex.split(shipped[0])[:-2] == shlex.split(carrel_part), \
        (shipped[0], ours[1])
    assert shlex.split(app) == ["GDK_BACKEND=wayland", "/usr/bin/carrel-browser", "/etc/carrel/exam.seb"], app


# A hostile quiz page: it tries what an exam page must not do, reports where
# it still is, then leaves through the quit URL.
HOSTILE = """<!doctype html><html><head><meta charset="utf-8"><title>Hostile</title></head><body>
<h1>Question 1</h1><a id="dl" href="/quiz-download.bin" download>answers</a>
<script>
var steps = [
  function () { window.print(); },
  function () { window.open("/elsewhere-popup.html", "_blank"); },
  function () { location.href = "file:///etc/passwd"; },
  function () { location.href = "view-source:" + location.href; },
  function () { document.getElementById("dl").click(); },
  function () { location.href = "/quiz-attachment.bin"; },
  function () {
    fetch("/report", {method: "POST", body: JSON.stringify({href: location.href, title: document.title})})
      .then(function () { location.href = "/quit"; });
  },
];
var i = 0;
(function next() { if (i < steps.length) { try { steps[i++](); } catch (e) {} setTimeout(next, 400); } })();
</script></body></html>"""


def test_a_hostile_page_cannot_print_download_open_windows_or_leave_the_web(carrel, browser_bin, lms):
    """print(), a pop-up outside the filter, file: and view-source: URLs, a
    download link and an attachment: each refused (the pop-up and file: by
    WebKit itself, unasked), none requested that the filter forbids, the page
    still there afterwards, and the quit URL ends the session."""
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = HOSTILE.encode()
    lms.pages["/quiz-download.bin"] = b"\x00\x01secret answers"
    lms.pages["/quiz-attachment.bin"] = b"\x00\x01secret answers"
    lms.pages["/elsewhere-popup.html"] = b"<h1>must never be fetched</h1>"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    assert "refused: printing" in got, f"lines {got}"
    assert f"blocked view-source:{lms.base}/quiz.html" in got, f"lines {got}"
    # The download link (WebKit's download) and the attachment (a response no page can show).
    assert "refused: download" in got and f"refused: download of {lms.base}/quiz-attachment.bin" in got, \
        f"lines {got}"
    assert f"quit URL {lms.base}/quit" in got and got[-1] == "event ended", f"lines {got}"
    paths = lms.paths()
    assert "/elsewhere-popup.html" not in paths and "/quit" not in paths, f"requests {paths}"
    assert lms.reports == [{"href": f"{lms.base}/quiz.html", "title": "Hostile"}], \
        f"the page was not where it started after its attempts: {lms.reports}"



# A page that floods: 300 pop-ups at once, 2000 calls of the SEB JavaScript
# API, 40 navigations outside the filter in quick succession; then it says
# where it is and what it got, and leaves through the quit URL.
FLOOD = """<!doctype html><html><head><meta charset="utf-8"><title>Flood</title></head><body>
<h1>Question 1</h1>
<script>
var report = {opened: 0, callbacks: 0};
for (var i = 0; i < 300; i++) {
  try { if (window.open("/elsewhere-popup.html?" + i, "_blank")) report.opened++; } catch (e) {}
}
for (var j = 0; j < 2000; j++) window.SafeExamBrowser.security.updateKeys(function () { report.callbacks++; });
var k = 0;
(function away() {
  if (k < 40) { k++; location.href = "/elsewhere.html?" + k; setTimeout(away, 25); return; }
  setTimeout(function () {
    report.href = location.href;
    report.configKey = window.SafeExamBrowser.security.configKey;
    fetch("/report", {method: "POST", body: JSON.stringify(report)}).then(function () { location.href = "/quit"; });
  }, 500);
})();
</script></body></html>"""


def test_a_page_flooding_pop_ups_the_js_api_and_blocked_navigations_is_bounded_and_the_exam_stays(
        carrel, browser_bin, lms):
    """300 window.open calls, 2000 updateKeys calls and 40 navigations
    outside the filter from one page: no pop-up opens, nothing outside the
    filter is requested, every API call is answered with the same per-page
    key, the session is never interrupted, the page is still where it
    started, and the quit URL still ends the session."""
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = FLOOD.encode()
    lms.pages["/elsewhere.html"] = b"<h1>must never be fetched</h1>"
    lms.pages["/elsewhere-popup.html"] = b"<h1>must never be fetched</h1>"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT * 2)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    paths = lms.paths()
    assert not [p for p in paths if p.startswith("/elsewhere")], f"requested outside the filter: {paths}"
    assert len(lms.reports) == 1, f"reports {lms.reports}; carrel-browser said {got}"
    seen = lms.reports[0]
    assert seen["opened"] == 0 and seen["callbacks"] == 2000, seen
    assert seen["href"] == f"{lms.base}/quiz.html", f"the page was not where it started: {seen}"
    assert seen["configKey"] == url_hash(f"{lms.base}/quiz.html", expected_config_key(lms)), seen
    assert not [line for line in got if line.startswith("event interrupted")], f"interrupted: {got}"
    assert f"quit URL {lms.base}/quit" in got and got[-1] == "event ended", f"lines {got}"
    # Carrel's own record: one session, begun and ended, never interrupted.
    assert [e["detail"] for e in c.trace(effect="session") if " interrupted" in e["detail"]] == [], \
        "Carrel's trace shows an interruption"


GREEN = (0x10, 0xa0, 0x30)


def green_pixels(image, enough: int = 0) -> int:
    """Pixels of exactly GREEN (the quiz page's background)."""
    needle, count = bytes(GREEN), 0
    for row in image.rgb_rows():
        at = row.find(needle)
        while at >= 0:
            count += at % 3 == 0
            if enough and count >= enough:
                return count
            at = row.find(needle, at + 1)
    return count


def test_as_the_x_server_shows_it_the_exam_page_fills_the_screen_while_the_session_holds(
        carrel, browser_bin, lms, procs, logdir, logs, carrelctl, control_dir, artifacts_dir):
    """Carrel nested in Xvfb: the quiz page (green) is what the screen shows
    once the session began, with carrel-browser's bar the only other thing on
    it; an administrator's interruption then hides it and ends the session.
    (Once carrel-browser hides the page it ends at once and Carrel, not a
    kiosk here, exits: the hidden screen is proven by the lines, not a picture.)"""
    from x_display import save, screenshot, start_xvfb

    h.require_tool("Xvfb")
    display = start_xvfb(procs, logdir, logs)
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = (b"<!doctype html><html><body style='margin:0;background:#10a030'>"
                               b"<h1 style='color:#fff'>Question 1</h1></body></html>")
    socket = control_dir / "control.sock"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     backend="x11", env={"DISPLAY": display}, args=["--control-socket", str(socket)])
    assert h.wait_until(lambda: f"loaded {lms.base}/quiz.html" in lines(c.stdout_path, NAME), PAGE_TIMEOUT), \
        f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    shown = h.wait_until(lambda: green_pixels(screenshot(display)) > 0.8 * 1280 * 720, h.CLIENT_TIMEOUT,
                         interval=0.25)
    image = screenshot(display)
    if not shown:
        png = save(image, artifacts_dir, "browser-exam-shown")
        pytest.fail(f"the quiz never filled most of the screen: {green_pixels(image)} green pixels; {png}")
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert h.wait_until(lambda: "content hidden" in lines(c.stdout_path, NAME), h.CLIENT_TIMEOUT), \
        lines(c.stdout_path, NAME)
    assert c.wait_exit() == 0, c.evidence()
    assert lines(c.stdout_path, NAME)[-3:] == ["event interrupted administrative fire alarm", "content hidden",
                                               "event ended"], lines(c.stdout_path, NAME)


def rncryptor_v3(plaintext: bytes, password: str) -> bytes:
    """RNCryptor v3 with a password, written here with Python's cryptography
    (not carrel-browser's code): what SEB's "pswd" container holds."""
    from cryptography.hazmat.primitives import hashes, hmac, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    encryption_salt, hmac_salt, iv = os.urandom(8), os.urandom(8), os.urandom(16)
    key = hashlib.pbkdf2_hmac("sha1", password.encode(), encryption_salt, 10000, 32)
    hmac_key = hashlib.pbkdf2_hmac("sha1", password.encode(), hmac_salt, 10000, 32)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    message = bytes([3, 1]) + encryption_salt + hmac_salt + iv + encryptor.update(padded) + encryptor.finalize()
    mac = hmac.HMAC(hmac_key, hashes.SHA256())
    mac.update(message)
    return message + mac.finalize()


def test_a_password_encrypted_seb_opens_with_its_password_and_keeps_its_config_key(
        carrel, browser_bin, lms, tmp_path):
    """A "pswd" .seb as SEB writes it (gzip around the prefix and RNCryptor
    v3 around gzipped XML, made here with Python's cryptography), fetched
    through a seb:// link: a wrong password is a clear error before
    anything is shown; without one carrel-browser asks in a window of its own
    (and, with no display to ask on, says to give --password-file); the right
    one runs the exam, whose header carries the Config Key of the decrypted
    settings."""
    import gzip
    lms.pages["/exam.seb"] = gzip.compress(b"pswd" + rncryptor_v3(gzip.compress(seb_xml(lms).encode()), "Start-123"))
    lms.pages["/quiz.html"] = QUIZ.replace("THEN", "/quit").encode()
    link = f"seb://127.0.0.1:{lms.port}/exam.seb"
    wrong, right = tmp_path / "wrong", tmp_path / "right"
    wrong.write_text("start-123\n")
    right.write_text("Start-123\n")
    r = subprocess.run([str(browser_bin), "--password-file", str(wrong), link], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 65 and "the password does not open this file" in r.stderr, r.stderr
    r = subprocess.run([str(browser_bin), link], capture_output=True, text=True, timeout=30)
    assert r.returncode == 65 and "--password-file" in r.stderr, r.stderr
    # Without --password-file, under Carrel: it asks, in a window of its own, before anything is shown.
    asking = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), link], wait_ready=False)
    assert h.wait_until(lambda: "asking for the configuration's password" in lines(asking.stdout_path, NAME),
                        PAGE_TIMEOUT), f"{lines(asking.stdout_path, NAME)}\n{asking.evidence()}"
    asking.signal(signal.SIGTERM)
    asking.wait_exit()
    assert "/quiz.html" not in lms.paths(), f"the exam was requested before its password: {lms.paths()}"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), "--password-file", str(right), link],
                     wait_ready=False)
    assert c.wait_exit(timeout=PAGE_TIMEOUT) == 0, f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    assert lines(c.stdout_path, NAME)[-1] == "event ended", lines(c.stdout_path, NAME)
    quiz = [r for r in lms.requests if r["path"] == "/quiz.html"]
    assert quiz and quiz[0]["headers"].get("x-safeexambrowser-configkeyhash") == \
        url_hash(lms.base + "/quiz.html", expected_config_key(lms)), quiz


def test_a_second_browser_fails_to_begin_says_why_and_never_loads_the_exam(
        carrel, browser_bin, lms, carrelctl, control_dir, logdir, logs):
    """While one carrel-browser's session holds the machine, a second one
    started beside it hears failed(already_active), says so and requests
    nothing of the exam; the first then ends at an administrator's word."""
    lms.pages["/exam.seb"] = seb_xml(lms).encode()
    lms.pages["/quiz.html"] = b"<!doctype html><h1>Question 1</h1>"
    first, second = logdir / "first.out", logdir / "second.out"
    script = ('"$0" "$1" > "$2" 2>&1 & first=$!; i=0; '
              'until grep -q "event began" "$2"; do i=$((i+1)); [ $i -gt 300 ] && break; sleep 0.1; done; '
              '"$0" "$1" > "$3" 2>&1 & second=$!; j=0; '
              'until grep -q "event failed" "$3"; do j=$((j+1)); [ $j -gt 300 ] && break; sleep 0.1; done; '
              'kill $second; wait $second; wait $first')
    socket = control_dir / "control.sock"
    c = carrel.start(app=["env", *BROWSER_ENV, "sh", "-c", script, str(browser_bin),
                          f"seb://127.0.0.1:{lms.port}/exam.seb", str(first), str(second)],
                     args=["--control-socket", str(socket)], wait_ready=False)
    assert h.wait_until(lambda: any(line.startswith("event failed") for line in lines(second, NAME)), PAGE_TIMEOUT), \
        f"first: {lines(first, NAME)}\nsecond: {lines(second, NAME)}\n{c.evidence()}"
    got = lines(second, NAME)
    assert got[:1] == ["locking"] and got[1].startswith("event failed already_active"), got
    assert not any(line.startswith("loading") for line in got), got
    assert h.wait_until(lambda: f"loaded {lms.base}/quiz.html" in lines(first, NAME), PAGE_TIMEOUT), lines(first, NAME)
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert c.wait_exit() == 0, c.evidence()
    assert lines(first, NAME)[-1] == "event ended", lines(first, NAME)
    assert [p for p in lms.paths() if p == "/quiz.html"] == ["/quiz.html"], f"requests {lms.paths()}"


def x_exam(carrel, browser_bin, lms, procs, logdir, logs, page: bytes, extra=(), args=(), env=None, seb=None):
    """Carrel nested in Xvfb running carrel-browser as its exam app on `page`
    (the quiz) and `seb` (else seb_xml's); returns (carrel, display) once the
    page has loaded and Carrel's X window has the keyboard (xdotool types into it)."""
    from x_display import start_xvfb, x_windows

    h.require_tool("Xvfb")
    h.require_tool("xdotool")
    display = start_xvfb(procs, logdir, logs)
    lms.pages["/exam.seb"] = (seb or seb_xml(lms)).encode()
    lms.pages["/quiz.html"] = page
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), *extra, f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     backend="x11", env={"DISPLAY": display, **(env or {})}, args=list(args), wait_ready=False)
    assert h.wait_until(lambda: f"loaded {lms.base}/quiz.html" in lines(c.stdout_path, NAME), PAGE_TIMEOUT), \
        f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    assert h.wait_until(lambda: x_windows(display), h.CLIENT_TIMEOUT), f"carrel has no X window\n{c.evidence()}"
    xdo(display, "windowfocus", "--sync", x_windows(display)[0])
    xdo(display, "mousemove", "640", "400")
    return c, display


def xdo(display: str, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=h.clean_env({"DISPLAY": display}), check=True, timeout=15,
                   stdin=subprocess.DEVNULL, capture_output=True)


def wait_green(display: str, artifacts_dir, name: str) -> None:
    """The quiz page (green) fills most of the screen as the X server shows it."""
    from x_display import save, screenshot
    shown = h.wait_until(lambda: green_pixels(screenshot(display)) > 0.8 * 1280 * 720, h.CLIENT_TIMEOUT,
                         interval=0.25)
    if not shown:
        image = screenshot(display)
        pytest.fail(f"the quiz never filled the screen: {green_pixels(image)} green pixels; "
                    f"{save(image, artifacts_dir, name)}")


# A quiz with one answer field, focused from the start, in a form posted to the LMS.
JAPANESE_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title></head>
<body style="margin:0;background:#10a030"><form method="post" action="/quiz-answer" accept-charset="utf-8">
<input id="answer" name="answer" autofocus autocomplete="off" style="font-size:40px;width:90%;margin:40px">
</form><script>document.getElementById("answer").focus();</script></body></html>"""


def test_japanese_typed_through_mozc_into_a_web_form_reaches_the_server(
        carrel, browser_bin, lms, procs, logdir, logs, tmp_path):
    """The policy runs fcitx5 with mozc; carrel-browser's session allows
    input_method (--allow). Romaji typed with real keys into the page's form
    field compose through GTK 4's text-input-v3 and Carrel's relay into
    日本語, which the form posts: the server receives exactly that, and
    Carrel's trace shows the keys given to the input method for the exam
    app's window."""
    import urllib.parse
    from input_method import write_policy

    h.require_tool("fcitx5")
    policy = write_policy(tmp_path, ["mozc"])
    c, display = x_exam(carrel, browser_bin, lms, procs, logdir, logs, JAPANESE_QUIZ.encode(),
                        extra=["--allow", "input_method"], args=["--policy", str(policy)],
                        env={"LANG": "C.UTF-8"})
    log = lambda: c.stderr_path.read_text(errors="replace")  # noqa: E731
    # The session (no predictive_text) restarts the engine; the new one grabs
    # the keyboard and is activated for the page's focused field.
    restart = "restarting the engine with its own prediction off"
    assert h.wait_until(lambda: restart in log(), PAGE_TIMEOUT), c.evidence()
    assert h.wait_until(lambda: "activating the engine" in log()[log().index(restart):]
                        and "the engine grabbed the keyboard" in log()[log().index(restart):], PAGE_TIMEOUT), \
        f"the engine was never activated for the page's field\n{c.evidence()}"
    xdo(display, "type", "--delay", "80", "nihongo")
    for key in ("space", "Return"):
        time.sleep(0.5)   # the engine's answer to one key before the next (the result is waited for below)
        xdo(display, "key", key)
    time.sleep(0.5)
    xdo(display, "key", "Return")   # the commit's Return went to mozc; this one submits the form
    posted = lambda: [r for r in lms.requests if r["method"] == "POST" and r["path"] == "/quiz-answer"]  # noqa: E731
    assert h.wait_until(posted, PAGE_TIMEOUT), \
        f"the form was never posted: requests {lms.paths()}; {lines(c.stdout_path, NAME)}\n{c.evidence()}"
    answer = urllib.parse.parse_qs(posted()[0]["body"].decode("ascii"))
    assert answer == {"answer": ["日本語"]}, f"the server received {answer}, not 日本語\n{c.evidence()}"
    assert len(c.trace(effect="deliverKeyToInputMethod", role="app")) >= len("nihongo"), \
        f"Carrel's trace shows the keys not given to the input method for the exam app\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_without_allow_input_method_the_web_form_gets_the_plain_keys(
        carrel, browser_bin, lms, procs, logdir, logs, tmp_path):
    """The same policy and page, carrel-browser's session not allowing
    input_method: the engine runs but composes for nobody, and the form posts
    the romaji as typed."""
    import urllib.parse
    from input_method import write_policy

    h.require_tool("fcitx5")
    policy = write_policy(tmp_path, ["mozc"])
    c, display = x_exam(carrel, browser_bin, lms, procs, logdir, logs, JAPANESE_QUIZ.encode(),
                        args=["--policy", str(policy)], env={"LANG": "C.UTF-8"})
    log = lambda: c.stderr_path.read_text(errors="replace")  # noqa: E731
    assert h.wait_until(lambda: "input method: the engine bound the input method" in log(), PAGE_TIMEOUT), \
        c.evidence()
    xdo(display, "type", "--delay", "80", "nihongo")
    time.sleep(0.5)
    xdo(display, "key", "Return")
    posted = lambda: [r for r in lms.requests if r["method"] == "POST" and r["path"] == "/quiz-answer"]  # noqa: E731
    assert h.wait_until(posted, PAGE_TIMEOUT), \
        f"the form was never posted: requests {lms.paths()}; {lines(c.stdout_path, NAME)}\n{c.evidence()}"
    answer = urllib.parse.parse_qs(posted()[0]["body"].decode("ascii"))
    assert answer == {"answer": ["nihongo"]}, f"the server received {answer}, not the plain keys\n{c.evidence()}"
    assert not c.trace(effect="deliverKeyToInputMethod", role="app"), \
        "Carrel gave the exam app's keys to the input method though its session did not allow it"
    assert c.alive(), c.evidence()


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, comm) of every descendant of `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    comm: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue
        children.setdefault(int(fields.get("PPid", "0")), []).append(int(entry.name))
        comm[int(entry.name)] = fields.get("Name", "")
    found, stack = [], list(children.get(pid, []))
    while stack:
        p = stack.pop()
        found.append((p, comm.get(p, "")))
        stack += children.get(p, [])
    return found


def test_the_web_process_killed_hides_the_exam_and_ends_the_session(
        carrel, browser_bin, lms, procs, logdir, logs, artifacts_dir):
    """The WebKitWebProcess under carrel-browser killed with SIGKILL while the
    quiz is shown: the page goes from the screen (the X server shows none of
    it, only carrel-browser's notice), the session ends (Carrel's audit log),
    nothing of the exam is requested again, and carrel-browser, closed, exits 4."""
    from x_display import save, screenshot

    page = (b"<!doctype html><html><body style='margin:0;background:#10a030'>"
            b"<h1 style='color:#fff'>Question 1</h1></body></html>")
    c, display = x_exam(carrel, browser_bin, lms, procs, logdir, logs, page)
    wait_green(display, artifacts_dir, "browser-before-web-process-killed")
    under = descendants(c.pid)
    browsers = [p for p, name in under if name == "carrel-browser"]
    assert len(browsers) == 1, f"carrel-browser under carrel: {under}"
    # /proc's Name is the first 15 bytes of WebKitWebProcess; the sandbox (bwrap) stands between.
    web = [p for p, name in descendants(browsers[0]) if name.startswith("WebKitWebProces")]
    assert web, f"no web process under carrel-browser: {descendants(browsers[0])}"
    requested = len(lms.paths())
    for pid in web:
        os.kill(pid, signal.SIGKILL)

    assert h.wait_until(lambda: "event ended" in lines(c.stdout_path, NAME), PAGE_TIMEOUT), \
        f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    got = lines(c.stdout_path, NAME)
    assert got[-3:] == ["web process ended crashed", "content hidden", "event ended"], f"lines {got}"
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}"
    last = [None]

    def hidden():
        last[0] = screenshot(display)
        return green_pixels(last[0], enough=1) == 0

    gone = h.wait_until(hidden, h.CLIENT_TIMEOUT, interval=0.25)
    png = save(last[0], artifacts_dir, "browser-web-process-killed")
    assert gone, f"the quiz is still on screen after its web process died: {green_pixels(last[0])} green; {png}"
    # The notice stays (no exam, no page): still nothing of the quiz after a while.
    time.sleep(1.0)
    assert green_pixels(screenshot(display), enough=1) == 0, "the quiz came back"
    assert c.alive(), f"carrel-browser did not stay with its notice\n{c.evidence()}"
    assert len(lms.paths()) == requested, f"requested after the crash: {lms.paths()[requested:]}"
    xdo(display, "key", "ctrl+q")   # with no exam shown there is nothing to guard: it quits
    assert c.wait_exit() == 4, f"carrel-browser (whose status is Carrel's) did not exit 4\n{c.evidence()}"


# A quiz that reports the keys it was given and whether printing began, when "k" is pressed.
SHORTCUT_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title></head>
<body style="margin:0;background:#10a030"><h1 style="color:#fff">Question 1</h1><script>
var seen = {keys: [], beforeprint: 0};
addEventListener("beforeprint", function () { seen.beforeprint++; });
addEventListener("keydown", function (e) {
  if (["Control", "Shift", "Alt", "Meta"].indexOf(e.key) < 0) seen.keys.push(e.key);
  if (e.key === "k") fetch("/report", {method: "POST", body: JSON.stringify(seen)});
});
</script></body></html>"""


def test_developer_tools_view_source_and_print_shortcuts_do_nothing(
        carrel, browser_bin, lms, procs, logdir, logs, artifacts_dir):
    """F12, Ctrl+Shift+I, Ctrl+U and Ctrl+P, pressed with real keys while the
    quiz is shown and the configuration allows none of them: no inspector,
    no view-source navigation, no printing (the page sees no beforeprint, nor
    the keys), nothing requested, the screen as it was; a plain key after
    them reaches the page."""
    from x_display import save, screenshot

    c, display = x_exam(carrel, browser_bin, lms, procs, logdir, logs, SHORTCUT_QUIZ.encode())
    wait_green(display, artifacts_dir, "browser-shortcuts-before")
    before = screenshot(display)
    said, requested = lines(c.stdout_path, NAME), lms.paths()
    for key in ("F12", "ctrl+shift+i", "ctrl+u", "ctrl+p", "k"):
        xdo(display, "key", key)
        time.sleep(0.3)
    assert h.wait_until(lambda: lms.reports, PAGE_TIMEOUT), \
        f"the page never saw the plain key: requests {lms.paths()}\n{c.evidence()}"
    assert lms.reports == [{"keys": ["k"], "beforeprint": 0}], f"the page saw {lms.reports}"
    assert lms.paths() == requested + ["/report"], f"requested after the shortcuts: {lms.paths()[len(requested):]}"
    assert lines(c.stdout_path, NAME) == said, \
        f"carrel-browser acted on a shortcut: {lines(c.stdout_path, NAME)[len(said):]}"
    after = screenshot(display)
    if list(after.rgb_rows()) != list(before.rgb_rows()):
        pytest.fail(f"the screen changed: {save(before, artifacts_dir, 'browser-shortcuts-before')} → "
                    f"{save(after, artifacts_dir, 'browser-shortcuts-after')}")
    assert c.alive(), c.evidence()


# A quiz that asks, from every kind of request a page makes, for one URL the
# filter allows and one it blocks (an image, a script, a stylesheet, a
# fetch, a frame), opens a WebSocket, sends a beacon and an EventSource to
# blocked URLs, then fetches each URL of TABLE, posts what it got and leaves
# through the quit URL.
CONTENT_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title>
<link rel="stylesheet" href="/quiz-style-ok.css"><link rel="stylesheet" href="/blocked-style.css">
<script src="/quiz-script-ok.js"></script><script src="/blocked-script.js"></script>
</head><body><h1>Question 1</h1>
<img src="/quiz-img-ok.png"><img src="/blocked-img.png">
<iframe src="/quiz-frame-ok.html"></iframe><iframe src="/blocked-frame.html"></iframe>
<script>
var table = TABLE;
function get(url) {
  return fetch(url, {mode: "no-cors", cache: "no-store"}).then(function () { return "answered"; },
                                                              function () { return "failed"; });
}
try { new WebSocket("ws://" + location.host + "/blocked-websocket"); } catch (e) {}
try { navigator.sendBeacon("/blocked-beacon", "x"); } catch (e) {}
try { new EventSource("/blocked-events").onerror = function (e) { e.target.close(); }; } catch (e) {}
window.addEventListener("load", function () {
  Promise.all([get("/quiz-fetch-ok"), get("/blocked-fetch")].concat(table.map(get))).then(function (got) {
    var report = {okScript: window.okScript === true, blockedScript: window.blockedScript === true, fetches: got};
    fetch("/report", {method: "POST", body: JSON.stringify(report)}).then(function () { location.href = "/quit"; });
  });
});
</script></body></html>"""

SUBRESOURCES = ["/quiz-style-ok.css", "/blocked-style.css", "/quiz-script-ok.js", "/blocked-script.js",
                "/quiz-img-ok.png", "/blocked-img.png", "/quiz-frame-ok.html", "/blocked-frame.html",
                "/quiz-fetch-ok", "/blocked-fetch", "/blocked-websocket", "/blocked-beacon", "/blocked-events"]

# The rules the table tries, beside seb_xml's two (127.0.0.1/quiz*, 127.0.0.1/report).
TABLE_RULES = [(0, "secret", True),                                   # a regex blocking anywhere, first
               (1, "127.0.0.1/table/page?.", False),                  # a path with no query
               (1, "127.0.0.1/table/dir/", False),                    # a path with or without its "/"
               (1, r"^http://127\.0\.0\.1:\d+/table/re-[a-z]+$", True),
               (1, "localhost:PORT/table/ok*", False),                # a one-word host and a port
               (1, "127.0.0.1:1/table/wrongport*", False)]            # another port


def table_urls(lms: LMS) -> dict[str, bool]:
    """Each URL the table page fetches, and whether SEB's rules allow it (by hand)."""
    base, alt = lms.base, f"http://localhost:{lms.port}"
    return {f"{base}/table/page": True, f"{base}/table/page?x=1": False, f"{base}/table/dir": True,
            f"{base}/table/dir/": True, f"{base}/table/dir/sub": False, f"{base}/table/re-abc": True,
            f"{base}/table/re-ABC": True, f"{base}/table/re-abc1": False, f"{base}/table/re-secret": False,
            f"{alt}/table/ok-1": True, f"{alt}/table/ok-secret": False, f"{base}/table/ok-1": False,
            f"{base}/table/wrongport": False, f"{base}/quiz-table-a%20b": True, f"{alt}/quiz-table": False,
            f"{base}/table/page?": True}


def content_exam(lms: LMS, content_filter: bool) -> dict[str, bool]:
    rules = [(a, e.replace("PORT", str(lms.port)), r) for a, e, r in TABLE_RULES]
    lms.pages["/exam.seb"] = seb_xml(lms, content_filter=content_filter, rules=rules).encode()
    table = table_urls(lms)
    lms.pages["/quiz.html"] = CONTENT_QUIZ.replace("TABLE", json.dumps(list(table))).encode()
    lms.pages["/quiz-script-ok.js"] = b"window.okScript = true;"
    lms.pages["/blocked-script.js"] = b"window.blockedScript = true;"
    for path in ("/quiz-style-ok.css", "/blocked-style.css", "/quiz-img-ok.png", "/blocked-img.png",
                 "/quiz-frame-ok.html", "/blocked-frame.html", "/quiz-fetch-ok", "/blocked-fetch", "/blocked-beacon",
                 "/blocked-events"):
        lms.pages[path] = b"x"
    for url in table:
        lms.pages[url.split(str(lms.port), 1)[1].split("?")[0]] = b"x"
    return table


def requested(lms: LMS) -> set[str]:
    """Each request's URL as the server saw it (its Host header and path)."""
    with lms.lock:
        return {f"http://{r['headers'].get('host', '')}{r['path']}" for r in lms.requests}


def test_with_the_content_filter_every_request_is_filtered_as_navigations_are(carrel, browser_bin, lms):
    """URLFilterEnableContentFilter on: of an image, a script, a stylesheet,
    a fetch and a frame each, the server sees the allowed one and never the
    blocked one (the blocked script never runs); nor a beacon, an
    EventSource or a WebSocket to a blocked URL. On a table of URLs that
    tries the rules' parts (a blocking regex tried first, a query that must
    be absent, a path's trailing "/", an anchored case-blind regex, a
    one-word host with its port, another port), what reaches the server is
    exactly what carrel-browser --check (the browser's own filter, ICU)
    allows: the web process's PCRE reads the rules as the browser does."""
    table = content_exam(lms, content_filter=True)
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT * 2)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    paths = lms.paths()
    for path in SUBRESOURCES:
        if path.startswith("/quiz-"):
            assert path in paths, f"the allowed {path} was not requested: {paths}"
        else:
            assert path not in paths, f"the blocked {path} left the machine: {paths}"
    assert len(lms.reports) == 1, f"reports {lms.reports}; carrel-browser said {got}"
    report = lms.reports[0]
    assert report["okScript"] is True and report["blockedScript"] is False, report
    assert report["fetches"][:2] == ["answered", "failed"], report

    check = subprocess.run([str(browser_bin), *[a for url in table for a in ("--check", url)],
                            f"seb://127.0.0.1:{lms.port}/exam.seb"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    verdicts = check.stdout.splitlines()
    assert len(verdicts) == len(table), check.stdout
    browser_allows = {url: line.startswith(f"allow {url}") for url, line in zip(table, verdicts)}
    assert browser_allows == table, f"carrel-browser --check disagrees with SEB's rules by hand:\n{check.stdout}"
    seen = requested(lms)
    web_process_allows = {url: url.split("#")[0] in seen for url in table}
    differ = {url: (browser_allows[url], web_process_allows[url]) for url in table
              if browser_allows[url] != web_process_allows[url]}
    assert not differ, f"(browser, web process) disagree on {differ}; requested {sorted(seen)}"
    assert report["fetches"][2:] == ["answered" if table[url] else "failed" for url in table], report
    assert f"blocked request {lms.base}/blocked-img.png" in got, f"lines {got}"
    assert f"quit URL {lms.base}/quit" in got and got[-1] == "event ended", f"lines {got}"


def test_without_the_content_filter_only_navigations_are_filtered_as_seb_does(carrel, browser_bin, lms):
    """The same quiz and rules, URLFilterEnableContentFilter off (SEB's
    default): the blocked image, script, stylesheet, fetch, beacon,
    EventSource and WebSocket are requested (SEB filters only navigations
    then), the blocked frame still is not."""
    table = content_exam(lms, content_filter=False)
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT * 2)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    paths = lms.paths()
    for path in SUBRESOURCES:
        if path == "/blocked-frame.html":
            assert path not in paths, f"the blocked frame left the machine: {paths}"
        else:
            assert path in paths, f"{path} was not requested: {paths}"
    assert f"blocked {lms.base}/blocked-frame.html" in got, f"lines {got}"
    assert not [line for line in got if line.startswith("blocked request")], f"lines {got}"
    assert lms.reports and lms.reports[0]["blockedScript"] is True, lms.reports
    seen = requested(lms)
    assert all(url.split("#")[0] in seen for url in table), f"not all requested: {sorted(seen)}"


class WebSocketEcho:
    """A WebSocket echo server on 127.0.0.1 (RFC 6455's handshake, text
    frames echoed): records each connection's path as soon as its request
    line arrives, before any handshake, so a connection that should never
    have left the machine shows even if it went no further."""

    GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self) -> None:
        self.connections: list[str] = []
        self.lock = threading.Lock()
        echo = self

        def frame(payload: bytes) -> bytes:
            size = len(payload)
            head = bytes([0x81, size]) if size < 126 else bytes([0x81, 126]) + size.to_bytes(2, "big")
            return head + payload

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                request = self.rfile.readline().decode("latin-1").split()
                with echo.lock:
                    echo.connections.append(request[1] if len(request) > 1 else "(nothing)")
                headers = {}
                while (line := self.rfile.readline().decode("latin-1").strip()):
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                accept = base64.b64encode(hashlib.sha1((headers.get("sec-websocket-key", "") + echo.GUID)
                                                       .encode()).digest()).decode()
                self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
                while len(head := self.rfile.read(2)) == 2:
                    opcode, size = head[0] & 0x0F, head[1] & 0x7F
                    if size == 126:
                        size = int.from_bytes(self.rfile.read(2), "big")
                    elif size == 127:
                        size = int.from_bytes(self.rfile.read(8), "big")
                    mask = self.rfile.read(4) if head[1] & 0x80 else bytes(4)
                    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(size)))
                    if opcode == 8:   # close: answer it and end
                        self.wfile.write(b"\x88\x00")
                        return
                    if opcode == 1:
                        self.wfile.write(frame(payload))

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def paths(self) -> list[str]:
        with self.lock:
            return list(self.connections)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def websocket_echo():
    server = WebSocketEcho()
    yield server
    server.close()


# A quiz that opens a WebSocket to each URL of SOCKETS at once, and from a
# worker (a blob:, as a page makes one) to each of WORKER_SOCKETS, sends each
# a line and waits for it back, posts what each got (echoed, or the error the
# page saw) and leaves through the quit URL.
WEBSOCKET_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title></head>
<body><h1>Question 1</h1><script id="sockets">
function openSocket(url) {
  return new Promise(function (resolve) {
    var done = false;
    function end(result) { if (!done) { done = true; resolve(result); } }
    var ws;
    try { ws = new WebSocket(url); } catch (e) { return end("threw " + e.name); }
    ws.onopen = function () { ws.send("ping " + url); };
    ws.onmessage = function (m) { end(m.data === "ping " + url ? "echoed" : "wrong " + m.data); ws.close(); };
    ws.onerror = function () { end("error"); };
    ws.onclose = function (e) { end("closed " + e.code); };
    setTimeout(function () { end("timeout"); }, 15000);
  });
}
</script><script>
var code = document.getElementById("sockets").textContent
    + "onmessage = function (e) { Promise.all(e.data.map(openSocket)).then(function (got) { postMessage(got); }); };";
var fromWorker = new Promise(function (resolve) {
  try {
    var worker = new Worker(URL.createObjectURL(new Blob([code], {type: "text/javascript"})));
    worker.onmessage = function (e) { resolve(e.data); };
    worker.onerror = function () { resolve(["worker failed"]); };
    worker.postMessage(WORKER_SOCKETS);
  } catch (e) { resolve(["worker threw " + e.name]); }
  setTimeout(function () { resolve(["worker timeout"]); }, 20000);
});
Promise.all([Promise.all(SOCKETS.map(openSocket)), fromWorker]).then(function (got) {
  fetch("/report", {method: "POST", body: JSON.stringify({websockets: got[0], worker: got[1]})})
    .then(function () { location.href = "/quit"; });
});
</script></body></html>"""


def test_with_the_content_filter_websockets_follow_the_rules_as_seb_reads_them(carrel, browser_bin, lms, websocket_echo):
    """URLFilterEnableContentFilter on, a WebSocket echo server on another
    port: a WebSocket the rules allow connects and echoes, whether its rule
    names the ws scheme or no scheme at all; one they block never reaches
    the server (it records no connection) and the page sees an error: no
    rule allows it, a block rule comes first, or the only rule for it names
    http (a rule's scheme is compared as written, as in SEB). A worker's
    WebSockets are held to the same rules. What connects is exactly what
    carrel-browser --check allows."""
    ws = f"ws://127.0.0.1:{websocket_echo.port}"
    rules = [(0, "secret", True),
             (1, f"ws://127.0.0.1:{websocket_echo.port}/ws-allowed", False),
             (1, "127.0.0.1/ws-any*", False),
             (1, f"http://127.0.0.1:{websocket_echo.port}/ws-http-rule", False)]
    sockets = {f"{ws}/ws-allowed": True, f"{ws}/ws-any-1": True, f"{ws}/ws-any-secret": False,
               f"{ws}/ws-http-rule": False, f"{ws}/ws-nothing": False}
    from_worker = {f"{ws}/ws-any-worker": True, f"{ws}/ws-worker-nothing": False}
    lms.pages["/exam.seb"] = seb_xml(lms, content_filter=True, rules=rules).encode()
    lms.pages["/quiz.html"] = (WEBSOCKET_QUIZ.replace("WORKER_SOCKETS", json.dumps(list(from_worker)))
                               .replace("SOCKETS", json.dumps(list(sockets))).encode())
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=PAGE_TIMEOUT * 2)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    assert len(lms.reports) == 1, f"reports {lms.reports}; carrel-browser said {got}"
    seen = dict(zip(sockets, lms.reports[0]["websockets"]))
    assert seen == {url: "echoed" if allowed else "error" for url, allowed in sockets.items()}, seen
    seen = dict(zip(from_worker, lms.reports[0]["worker"]))
    assert seen == {url: "echoed" if allowed else "error" for url, allowed in from_worker.items()}, \
        f"from the worker: {lms.reports[0]['worker']}"
    connections = websocket_echo.paths()
    assert sorted(connections) == sorted(url.removeprefix(ws) for url, allowed in {**sockets, **from_worker}.items()
                                         if allowed), f"the echo server saw {connections}"

    check = subprocess.run([str(browser_bin), *[a for url in sockets for a in ("--check", url)],
                            f"seb://127.0.0.1:{lms.port}/exam.seb"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    verdicts = check.stdout.splitlines()
    assert {url: line.startswith(f"allow {url}") for url, line in zip(sockets, verdicts)} == sockets, check.stdout
    assert f"quit URL {lms.base}/quit" in got and got[-1] == "event ended", f"lines {got}"


# A quiz that goes to the quit URL when "q" is pressed.
QUIT_QUIZ = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz</title></head>
<body style="margin:0;background:#10a030"><h1 style="color:#fff">Question 1</h1><script>
addEventListener("keydown", function (e) { if (e.key === "q") location.href = "/quit"; });
</script></body></html>"""


def test_quit_url_confirm_asks_in_the_browsers_own_window_and_quits_only_when_confirmed(
        carrel, browser_bin, lms, procs, logdir, logs, artifacts_dir):
    """quitURLConfirm on: the quit URL (never requested) brings carrel-browser's
    own question in place of the page (the X server shows none of the quiz);
    the session holds while it is asked; Escape ("no") gives the quiz back,
    and only the question's Quit (Alt+Q) ends the session."""
    from x_display import save, screenshot

    c, display = x_exam(carrel, browser_bin, lms, procs, logdir, logs, QUIT_QUIZ.encode(),
                        seb=seb_xml(lms, quit_confirm=True))
    wait_green(display, artifacts_dir, "browser-quit-confirm-before")
    asked = lambda n: lambda: lines(c.stdout_path, NAME).count("asking to confirm quitting") == n  # noqa: E731
    xdo(display, "key", "q")
    assert h.wait_until(asked(1), PAGE_TIMEOUT), f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    last = [None]

    def page_hidden():
        last[0] = screenshot(display)
        return green_pixels(last[0], enough=1) == 0
    hidden = h.wait_until(page_hidden, h.CLIENT_TIMEOUT, interval=0.25)
    assert hidden, f"the quiz still shows under the question: {save(last[0], artifacts_dir, 'browser-quit-confirm')}"
    time.sleep(1.0)
    got = lines(c.stdout_path, NAME)
    assert "event ended" not in got and c.alive(), f"the session ended before it was confirmed: {got}"
    xdo(display, "key", "Escape")
    assert h.wait_until(lambda: "quit not confirmed" in lines(c.stdout_path, NAME), h.CLIENT_TIMEOUT), \
        lines(c.stdout_path, NAME)
    wait_green(display, artifacts_dir, "browser-quit-confirm-back")
    assert "event ended" not in lines(c.stdout_path, NAME) and c.alive(), lines(c.stdout_path, NAME)
    xdo(display, "key", "q")
    assert h.wait_until(asked(2), PAGE_TIMEOUT), lines(c.stdout_path, NAME)
    xdo(display, "key", "alt+q")
    assert c.wait_exit(timeout=PAGE_TIMEOUT) == 0, f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    got = lines(c.stdout_path, NAME)
    assert got[-2:] == ["quit confirmed", "event ended"], f"lines {got}"
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}"
    assert "/quit" not in lms.paths(), lms.paths()


def test_quit_url_without_confirm_quits_at_once(carrel, browser_bin, lms):
    """quitURLConfirm off: the quit URL ends the session at once, asking nothing."""
    lms.pages["/exam.seb"] = seb_xml(lms, quit_confirm=False).encode()
    lms.pages["/quiz.html"] = b"<!doctype html><script>setTimeout(function () { location.href = '/quit'; }, 300);</script>"
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    assert c.wait_exit(timeout=PAGE_TIMEOUT) == 0, f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    got = lines(c.stdout_path, NAME)
    assert got[-2:] == [f"quit URL {lms.base}/quit", "event ended"], f"lines {got}"
    assert "asking to confirm quitting" not in got and "/quit" not in lms.paths(), (got, lms.paths())


# Moodle's flow for a quiz that requires SEB: the student logs in (the LMS
# sets its session cookie), the quiz page offers the configuration as a
# seb(s):// link, and the configuration is served only to the logged-in
# student. The local LMS speaks plain HTTP, so the link is seb:// (sebs://
# names the same over https).
LOGIN_THEN_LINK = """<!doctype html><html><head><meta charset="utf-8"><title>Quiz start</title></head>
<body><h1>Logged in</h1><a id="launch" href="LINK">Launch Safe Exam Browser</a><script>
setTimeout(function () { location.href = document.getElementById("launch").href; }, 300);
setTimeout(function () { fetch("/still-here", {method: "POST", body: location.href}); }, 3000);
</script></body></html>"""

ALLOW_RECONFIGURE = "  <key>examSessionReconfigureAllow</key><true/>\n"


def reconfigure_exam(lms: LMS, first_extra: str, second: bytes) -> str:
    """The first configuration (start page /login.html, which logs in and
    follows the link) and the second one, at /config.php for the logged-in
    student only; returns the link."""
    link = f"seb://127.0.0.1:{lms.port}/mod/quiz/accessrule/seb/config.php?cmid=7"
    lms.pages["/exam.seb"] = seb_xml(lms, start="/login.html", rules=[(1, "127.0.0.1/login*", False),
                                                                       (1, "127.0.0.1/still-here", False)],
                                     extra=first_extra).encode()
    lms.pages["/login.html"] = LOGIN_THEN_LINK.replace("LINK", link).encode()
    lms.cookie_setters["/login.html"] = "MoodleSession=logged-in-7"
    lms.pages["/mod/quiz/accessrule/seb/config.php"] = second
    lms.logged_in_only["/mod/quiz/accessrule/seb/config.php"] = "MoodleSession=logged-in-7"
    # The second configuration's quiz: it says it loaded, then leaves by the quit URL.
    lms.pages["/quiz2.html"] = (b"<!doctype html><h1>Question 2</h1><script>fetch('/report', {method: 'POST', body: "
                                b"'{}'}).then(function () { setTimeout(function () { location.href = '/quit'; }, 300); });"
                                b"</script>")
    return link


def test_a_seb_link_in_the_exam_reconfigures_with_the_logged_in_session_and_keeps_the_carrel_session(
        carrel, browser_bin, lms, tmp_path):
    """The first configuration allows reconfiguring: the page's seb:// link
    is fetched with the page's own cookies (the LMS serves the .seb only to
    the logged-in student), the new configuration's start page is loaded
    with the new Config Key's hash, the Carrel session carries on (one begin,
    one end), and the new configuration's quit URL ends it."""
    second = seb_xml(lms, start="/quiz2.html").replace("<key>allowSiri</key><false/>",
                                                       "<key>allowSiri</key><true/>")
    link = reconfigure_exam(lms, ALLOW_RECONFIGURE, second.encode())
    second_file = tmp_path / "second.seb"
    second_file.write_text(second)
    first_file = tmp_path / "first.seb"
    first_file.write_bytes(lms.pages["/exam.seb"])

    def config_key(path: Path) -> str:
        r = subprocess.run([str(browser_bin), "--keys", str(path)], capture_output=True, text=True, timeout=30)
        return next(line.split(": ")[-1] for line in r.stdout.splitlines() if line.startswith("Config Key"))
    first_key, second_key = config_key(first_file), config_key(second_file)
    assert first_key != second_key

    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    status = c.wait_exit(timeout=2 * PAGE_TIMEOUT)
    got = lines(c.stdout_path, NAME)
    assert status == 0, f"carrel exited {status}; carrel-browser said {got}\n{c.evidence()}"
    fetched = [r for r in lms.requests if r["path"].startswith("/mod/quiz/accessrule/seb/config.php")]
    assert fetched and "MoodleSession=logged-in-7" in fetched[0]["headers"].get("cookie", ""), \
        f"the configuration was not fetched with the login: {fetched} {got}"
    assert f"reconfigured from {link} (Config Key {second_key})" in got, f"lines {got}"
    assert f"loading {lms.base}/quiz2.html" in got and f"quit URL {lms.base}/quit" in got, f"lines {got}"
    quiz2 = [r for r in lms.requests if r["path"] == "/quiz2.html"]
    assert quiz2 and quiz2[0]["headers"].get("x-safeexambrowser-configkeyhash") == \
        url_hash(lms.base + "/quiz2.html", second_key), f"quiz2 requests {quiz2}"
    login = [r for r in lms.requests if r["path"] == "/login.html"]
    assert login[0]["headers"].get("x-safeexambrowser-configkeyhash") == url_hash(lms.base + "/login.html", first_key)
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}\n{c.evidence()}"
    assert got[-1] == "event ended", f"lines {got}"


def test_a_seb_link_is_refused_where_the_configuration_does_not_allow_reconfiguring(carrel, browser_bin, lms):
    """examSessionReconfigureAllow absent (SEB's default: no): the page's
    seb:// link fetches nothing, carrel-browser shows its refusal and the page
    stays (its own script still runs there); the exam then ends as usual."""
    link = reconfigure_exam(lms, "", seb_xml(lms, start="/quiz2.html").encode())
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    assert h.wait_until(lambda: "/still-here" in lms.paths(), PAGE_TIMEOUT), \
        f"{lms.paths()} {lines(c.stdout_path, NAME)}\n{c.evidence()}"
    got = lines(c.stdout_path, NAME)
    assert f"refused: reconfigure from {link} (the exam's configuration does not allow reconfiguring " \
           "during the exam)" in got and f"refusal shown for {link}" in got, f"lines {got}"
    still = [r for r in lms.requests if r["path"] == "/still-here"]
    assert still[0]["body"] == f"{lms.base}/login.html".encode(), still
    assert not any(p.startswith("/mod/quiz/accessrule/seb/config.php") or p == "/quiz2.html" for p in lms.paths()), \
        lms.paths()
    c.signal(signal.SIGTERM)
    c.wait_exit()


def test_a_seb_link_the_lms_refuses_without_its_login_is_refused_and_the_page_stays(carrel, browser_bin, lms):
    """Reconfiguring allowed, but the page never logged in (no cookie): the
    LMS answers 403 to the fetch, carrel-browser refuses saying so, and the
    page stays with nothing of the new configuration loaded."""
    link = reconfigure_exam(lms, ALLOW_RECONFIGURE, seb_xml(lms, start="/quiz2.html").encode())
    del lms.cookie_setters["/login.html"]
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    assert h.wait_until(lambda: "/still-here" in lms.paths(), PAGE_TIMEOUT), \
        f"{lms.paths()} {lines(c.stdout_path, NAME)}\n{c.evidence()}"
    got = lines(c.stdout_path, NAME)
    url = f"{lms.base}/mod/quiz/accessrule/seb/config.php?cmid=7"
    assert f"refused: reconfigure from {link} (the server answered 403 for {url})" in got, f"lines {got}"
    assert f"refusal shown for {link}" in got and "/quiz2.html" not in lms.paths(), (got, lms.paths())
    c.signal(signal.SIGTERM)
    c.wait_exit()


def test_a_password_protected_configuration_from_a_seb_link_asks_in_the_browsers_window(
        carrel, browser_bin, lms):
    """A "pswd" configuration opened from the page's seb:// link: carrel-browser
    asks for its password in its own window (the new start page is not
    requested meanwhile) rather than applying or dropping it."""
    import gzip
    second = gzip.compress(b"pswd" + rncryptor_v3(gzip.compress(seb_xml(lms, start="/quiz2.html").encode()),
                                                  "Phase-2"))
    reconfigure_exam(lms, ALLOW_RECONFIGURE, second)
    c = carrel.start(app=["env", *BROWSER_ENV, str(browser_bin), f"seb://127.0.0.1:{lms.port}/exam.seb"],
                     wait_ready=False)
    assert h.wait_until(lambda: "asking for the configuration's password" in lines(c.stdout_path, NAME),
                        PAGE_TIMEOUT), f"{lines(c.stdout_path, NAME)}\n{c.evidence()}"
    assert "/quiz2.html" not in lms.paths(), lms.paths()
    c.signal(signal.SIGTERM)
    c.wait_exit()
