"""A real toplevel client (weston-simple-shm) is configured to the output size
and keeps receiving frame callbacks; a second, untrusted client does not
disturb the app or crash carrel."""

import signal

import carrel_harness as h

OUTPUT_SIZE = (1280, 720)  # wlroots' headless default
FRAMES_WANTED = 20


def traced_app(trace_path):
    """argv for carrel's app: weston-simple-shm with its WAYLAND_DEBUG trace in a file."""
    return ["env", "WAYLAND_DEBUG=1", "sh", "-c", 'exec weston-simple-shm 2> "$0"', str(trace_path)]


def read_trace(path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def wait_for_trace(path, predicate, timeout):
    """Polls a client's trace until predicate(summary) holds; returns the last summary."""
    last = [None]

    def check():
        last[0] = h.parse_trace(read_trace(path), OUTPUT_SIZE)
        return predicate(last[0])

    ok = h.wait_until(check, timeout, interval=0.1)
    return bool(ok), last[0]


def test_app_toplevel_is_configured_to_the_output_and_gets_frames(carrel, logs, tmp_path):
    h.require_tool("weston-simple-shm")
    trace = tmp_path / "app.trace"
    logs.append(("app WAYLAND_DEBUG trace", trace))
    c = carrel.start(app=traced_app(trace))
    ok, summary = wait_for_trace(
        trace, lambda s: s.frames_done_after_output_size >= FRAMES_WANTED, 20)
    assert ok, (f"within 20 s the app did not get a {OUTPUT_SIZE[0]}x{OUTPUT_SIZE[1]} "
                f"configure followed by {FRAMES_WANTED} frame callbacks: {summary.describe()}\n"
                f"{c.evidence()}")
    assert not summary.protocol_errors, f"protocol error sent to the app: {summary.protocol_errors}"
    assert c.alive(), c.evidence()
    c.signal(signal.SIGTERM)
    assert c.wait_exit() == 0, c.evidence()


def test_untrusted_toplevel_beside_the_app_breaks_nothing(carrel, logs, tmp_path):
    h.require_tool("weston-simple-shm")
    app_trace = tmp_path / "app.trace"
    logs.append(("app WAYLAND_DEBUG trace", app_trace))
    c = carrel.start(app=traced_app(app_trace))
    ok, summary = wait_for_trace(app_trace, lambda s: s.frames_done >= 5, 20)
    assert ok, f"the app never got going: {summary.describe()}\n{c.evidence()}"

    other = c.client(["weston-simple-shm"], name="untrusted-shm", env={"WAYLAND_DEBUG": "1"})
    logs.append(("untrusted client WAYLAND_DEBUG trace", other.stderr_path))
    ok, other_summary = wait_for_trace(other.stderr_path, lambda s: s.attached_after_configure, 15)
    assert ok, (f"the untrusted client never got a configure and attached a buffer: "
                f"{other_summary.describe()}\nclient alive: {other.alive()}\n{c.evidence()}")

    # The app keeps getting frames with the other toplevel mapped.
    frames_then = h.parse_trace(read_trace(app_trace), OUTPUT_SIZE).frames_done
    ok, summary = wait_for_trace(
        app_trace, lambda s: s.frames_done >= frames_then + FRAMES_WANTED, 15)
    assert ok, (f"the app stopped getting frames once an untrusted toplevel mapped "
                f"(had {frames_then}): {summary.describe()}\n{c.evidence()}")
    assert c.alive(), f"carrel died with an untrusted toplevel mapped\n{c.evidence()}"
    other_summary = h.parse_trace(read_trace(other.stderr_path), OUTPUT_SIZE)
    assert not other_summary.protocol_errors, \
        f"protocol error sent to the untrusted client: {other_summary.protocol_errors}"
    assert other.alive(), (f"the untrusted client ended (status {other.proc.returncode}) while "
                           f"carrel ran: {other_summary.describe()}")
    assert not summary.protocol_errors, f"protocol error sent to the app: {summary.protocol_errors}"

    c.signal(signal.SIGTERM)
    status = c.wait_exit()
    assert status == 0, f"SIGTERM with two clients: exit status {status}\n{c.evidence()}"
