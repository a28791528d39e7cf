"""A participant that keeps moving to a new process, for test_participants.py.

    python forking_participant.py MARKER_FILE

It starts a runner that forks, the parent exiting at once, again and again (a few hundred
times a second), so whatever Carrel read from /proc a moment ago names a
process that is gone, and the one running now was born after. Each
runner generation's pid goes to MARKER_FILE (the last line is the live one). It
gives up (and so does the participant) by itself after 60 s whatever happens to Carrel and the test.
Only a kill of all its processes at once (the cgroup's) ends it."""

import os
import sys
import time

MARKER = sys.argv[1]
DEADLINE = time.monotonic() + 60
if os.fork() == 0:
    # The runner, out of the participant's process group.
    os.setsid()
    while time.monotonic() < DEADLINE:
        if os.fork() != 0:
            os._exit(0)
        with open(MARKER, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.003)
    os._exit(0)
# The participant itself stays, as a calculator would.
while time.monotonic() < DEADLINE:
    time.sleep(1)
