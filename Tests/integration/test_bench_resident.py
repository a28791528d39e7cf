"""bench/run's count of a compositor's executable pages resident, by kind of
section, against a running carrel: the parts add up to the whole, and the
whole is what the kernel's own smaps says of the same mappings."""

from __future__ import annotations

import importlib.util
import os
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
