"""Reading what carrel logged on stderr, and waiting for a line of it."""

from __future__ import annotations

import re
import time

import carrel_harness as h


def stderr(c) -> str:
    return c.stderr_path.read_text(errors="replace")


def wait_log(c, text, timeout=15.0, what=None):
    assert h.wait_until(lambda: text in stderr(c), timeout), \
        f"carrel never logged {what or text!r}\n{c.evidence()}"


def began(c, app):
    line = re.compile(rf"session began \(on behalf of {re.escape(app)}\)$", re.M)
    assert h.wait_until(lambda: line.search(stderr(c)), 15), \
        f"carrel never logged the line `session began (on behalf of {app})`\n{c.evidence()}"
    return time.monotonic()
