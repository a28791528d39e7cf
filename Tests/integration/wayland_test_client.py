"""What the hostile test clients (hostile_window.py, grabbing_window.py)
share: a connection with its globals, a report file, and shared-memory
buffers of one colour. Their protocol classes come from pywayland's scanner
output, on sys.path before this is imported; `shm_class` is that output's
WlShm."""

import mmap
import os

from pywayland.client import Display


class TestClient:
    def __init__(self, report: str):
        self.report = report
        self.display = Display()
        self.display.connect()
        self.registry = self.display.get_registry()
        self.names = {}
        self.registry.dispatcher["global"] = \
            lambda _r, name, interface, version: self.names.__setitem__(interface, (name, version))
        self.display.roundtrip()
        # Objects and buffers that must outlive the function that made them.
        self.keep = []

    def note(self, line: str) -> None:
        with open(self.report, "a") as f:
            f.write(line + "\n")

    def bind(self, cls, version: int):
        name, advertised = self.names[cls.name]
        return self.registry.bind(name, cls, min(version, advertised))

    def buffer(self, shm, shm_class, width: int, height: int, colour: bytes):
        """An xrgb8888 buffer of `colour` (r, g, b)."""
        stride = width * 4
        fd = os.memfd_create("carrel-test-client", os.MFD_CLOEXEC)
        os.ftruncate(fd, stride * height)
        with mmap.mmap(fd, stride * height) as data:
            data[:] = bytes([colour[2], colour[1], colour[0], 0xff]) * (width * height)
        pool = shm.create_pool(fd, stride * height)
        os.close(fd)
        made = pool.create_buffer(0, width, height, stride, shm_class.format.xrgb8888.value)
        pool.destroy()
        self.keep.append(made)
        return made
