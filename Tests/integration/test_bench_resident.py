"""bench/run's own measurements: its count of a compositor's executable pages
resident, by kind of section, against a running carrel (the parts add up to
the whole, and the whole is what the kernel's own smaps says of the same
mappings), and the floor programs it measures beside each compositor."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from importlib.machinery import SourceFileLoader

import carrel_harness as h


def bench_run():
    loader = SourceFileLoader("bench_run", str(h.REPO / "bench" / "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def smaps_rss_kb(pid: int, path: str, executable=None) -> int:
    """Rss of the mappings of `path` in pid, from /proc/PID/smaps: all of
    them, or only the executable ones (True) or only the others (False)."""
    total, mine = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                mine = len(fields) >= 6 and fields[-1] == path \
                    and executable in (None, fields[1][2] == "x")
            elif mine and fields[0] == "Rss:":
                total += int(fields[1])
    return total


def test_the_executable_s_resident_pages_are_counted_by_section(carrel):
    bench = bench_run()
    c = carrel.start(app=["sleep", "30"])
    exe = os.path.realpath(f"/proc/{c.pid}/exe")
    kinds = (None, True, False)
    before = [smaps_rss_kb(c.pid, exe, kind) for kind in kinds]
    kb = bench.executable_resident_kb(c.pid)
    after = [smaps_rss_kb(c.pid, exe, kind) for kind in kinds]
    assert set(kb) == {"all", "text", "rodata", "data", "swift5", "other"}, kb
    assert kb["all"] == sum(value for part, value in kb.items() if part != "all"), kb
    # Carrel has run its start-up code, relocated its metadata and looked up
    # Swift types: every kind of section has pages in memory.
    assert all(kb[part] > 0 for part in ("text", "rodata", "data", "swift5")), kb
    assert min(before[0], after[0]) <= kb["all"] <= max(before[0], after[0]), \
        f"pagemap counted {kb['all']} KB, smaps says {before[0]}-{after[0]} KB\n{c.evidence()}"
    # Code lies in the executable mappings, relocated data in the others
    # (which of the rest lies where depends on the linker's layout).
    assert kb["text"] <= max(before[1], after[1]), \
        f"counted {kb['text']} KB of .text, smaps says {before[1]}-{after[1]} KB executable\n{c.evidence()}"
    assert kb["data"] <= max(before[2], after[2]), \
        f"counted {kb['data']} KB of relocated data, smaps says {before[2]}-{after[2]} KB not executable\n{c.evidence()}"


def test_the_floor_programs_build_pace_their_frames_and_are_measured():
    bench = bench_run()
    if os.geteuid() != 0:
        bench.NOBODY = []  # already nobody: setpriv could not clear the groups
    # Readable by nobody, as bench/run's stage is (pytest's tmp_path is not).
    directory = tempfile.mkdtemp(prefix="carrel-floor-")
    os.chmod(directory, 0o755)
    floors = bench.Floors(directory)
    procs = bench.Processes()
    try:
        built = floors.built()
        assert sorted(built) == ["line-c", "line-swift", "pixels"]
        assert floors.built() is built  # built once

        bad = subprocess.run([built["pixels"], "scale", "16", "1"], capture_output=True, text=True, timeout=30)
        assert bad.returncode == 2 and "usage: pixels copy|blend" in bad.stderr, bad
        # One frame per period: 1 s at 20 ms is 50 frames, whatever each costs.
        for mode in ("copy", "blend"):
            ran = subprocess.run([built["pixels"], mode, "20", "1"], capture_output=True, text=True, timeout=30)
            assert ran.returncode == 0, ran.stderr
            fields = ran.stdout.split()
            assert fields[0::2] == ["cpu_ms_per_s", "frames", "cpu_ms_per_frame"], ran.stdout
            assert 40 <= int(fields[3]) <= 51, ran.stdout
            assert float(fields[1]) > 0 and float(fields[5]) > 0, ran.stdout

        class Cfg:
            window = 1.0
        assert bench.floor_pixels("carrel", floors, procs, Cfg, 60.0) > 0

        # The line programs: each waits after its line, and is measured as a
        # compositor is. The Swift one carries its runtime in its executable.
        c_hwm, c_exe = bench.floor_line("cage", floors, procs)
        swift_hwm, swift_exe = bench.floor_line("carrel", floors, procs)
        assert 0 < c_exe <= c_hwm and 0 < swift_exe <= swift_hwm, (c_hwm, c_exe, swift_hwm, swift_exe)
        assert swift_exe > c_exe, (c_exe, swift_exe)
        assert not procs.procs, "a floor program was left running"
    finally:
        procs.end_all()
        shutil.rmtree(directory, ignore_errors=True)


def rollup_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Rss:"))


def test_what_is_resident_is_told_apart_by_mapping(carrel, paint_bin):
    bench = bench_run()
    # A client redrawn every frame, one pixel short of the output: Carrel
    # maps its buffers and copies them into an output buffer of its own.
    c = carrel.start(app=[str(paint_bin), "--milestones", "--animate", "--fixed-size", "1279x719"])
    assert h.wait_until(lambda: "milestone first_frame_done" in c.stdout_path.read_text(errors="replace"),
                        h.CLIENT_TIMEOUT), f"the app never drew its first frame\n{c.evidence()}"
    time.sleep(0.5)
    exe = os.path.realpath(f"/proc/{c.pid}/exe")
    before = (rollup_rss_kb(c.pid), smaps_rss_kb(c.pid, exe))
    kb = bench.resident_by_mapping_kb(c.pid)
    after = (rollup_rss_kb(c.pid), smaps_rss_kb(c.pid, exe))
    assert set(kb) == {"pixels", "libraries", "heap", "executable", "other"}, kb
    total = sum(kb.values())
    assert min(before[0], after[0]) <= total <= max(before[0], after[0]), \
        f"counted {total} KB in all, smaps_rollup says {before[0]}-{after[0]} KB\n{c.evidence()}"
    assert min(before[1], after[1]) <= kb["executable"] <= max(before[1], after[1]), (kb, before, after)
    # One of the client's 1279x719 XRGB buffers at least (a memfd pool) and
    # the output's 1280x720 buffer it is copied into (wlroots' /dev/shm).
    # Built on wlroots 0.19 or 0.20, the headless output takes the lone
    # client's buffer itself (direct scanout: from 0.19 a buffer smaller than
    # the output may be shown), so Carrel never reads the pool and only the
    # output's buffer counts (docs/WLROOTS.md, "Left to do").
    if h.wlroots_version() in ("0.19", "0.20"):
        assert kb["pixels"] >= 1280 * 720 * 4 // 1024, kb
    else:
        assert kb["pixels"] >= (1279 * 719 + 1280 * 720) * 4 // 1024, kb
    assert kb["libraries"] > 0 and kb["heap"] > 0, kb
