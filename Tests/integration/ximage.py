"""Reads X Window Dump (XWD) files as `xwd -root` writes them, and writes PNGs.

Pure Python (struct + zlib), so the visual test needs no image library: the
screenshot comes from the X server, and this only decodes it.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

_HEADER = struct.Struct(">25I")
_ZPIXMAP = 2
_TRUE_COLOR, _DIRECT_COLOR = 4, 5


def _shift_and_width(mask: int) -> tuple:
    if mask == 0:
        raise ValueError("XWD: a colour mask is zero")
    shift = (mask & -mask).bit_length() - 1
    width = (mask >> shift).bit_length()
    return shift, width


@dataclass
class Image:
    width: int
    height: int
    bytes_per_line: int
    bits_per_pixel: int
    little_endian: bool
    masks: tuple  # red, green, blue
    data: bytes

    def pixel(self, x: int, y: int) -> tuple:
        """(r, g, b), 8 bits each."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IndexError(f"pixel ({x}, {y}) outside {self.width}x{self.height}")
        size = self.bits_per_pixel // 8
        at = y * self.bytes_per_line + x * size
        value = int.from_bytes(self.data[at:at + size], "little" if self.little_endian else "big")
        out = []
        for mask in self.masks:
            shift, width = _shift_and_width(mask)
            channel = (value & mask) >> shift
            out.append(channel * 255 // ((1 << width) - 1))
        return tuple(out)

    def region(self, cx: int, cy: int, half: int) -> list:
        """Every pixel of the (2*half+1)² square centred on (cx, cy), as ((x, y), rgb)."""
        return [((x, y), self.pixel(x, y))
                for y in range(cy - half, cy + half + 1)
                for x in range(cx - half, cx + half + 1)]

    def rgb_rows(self):
        """Rows of packed 8-bit RGB."""
        step = self.bits_per_pixel // 8
        fast = (step in (3, 4) and self.little_endian
                and self.masks == (0xFF0000, 0x00FF00, 0x0000FF))
        for y in range(self.height):
            start = y * self.bytes_per_line
            if fast:  # B, G, R[, X] in memory
                row = self.data[start:start + step * self.width]
                out = bytearray(3 * self.width)
                out[0::3], out[1::3], out[2::3] = row[2::step], row[1::step], row[0::step]
                yield bytes(out)
            else:
                yield b"".join(bytes(self.pixel(x, y)) for x in range(self.width))

    def to_png(self) -> bytes:
        raw = b"".join(b"\x00" + row for row in self.rgb_rows())

        def chunk(kind: bytes, body: bytes) -> bytes:
            return (struct.pack(">I", len(body)) + kind + body
                    + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

        return (b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6))
                + chunk(b"IEND", b""))


def parse_xwd(blob: bytes) -> Image:
    if len(blob) < _HEADER.size:
        raise ValueError(f"XWD: {len(blob)} bytes is shorter than the header")
    (header_size, version, pixmap_format, _depth, width, height, _xoffset, byte_order,
     _bitmap_unit, _bit_order, _pad, bits_per_pixel, bytes_per_line, visual_class,
     red_mask, green_mask, blue_mask, _bits_per_rgb, _cmap_entries, ncolors,
     *_window) = _HEADER.unpack_from(blob)
    if version != 7:
        raise ValueError(f"XWD: file version {version}, expected 7")
    if pixmap_format != _ZPIXMAP:
        raise ValueError(f"XWD: pixmap format {pixmap_format}, only ZPixmap is read")
    if visual_class not in (_TRUE_COLOR, _DIRECT_COLOR):
        raise ValueError(f"XWD: visual class {visual_class}, only TrueColor/DirectColor are read")
    if bits_per_pixel not in (16, 24, 32):
        raise ValueError(f"XWD: {bits_per_pixel} bits per pixel is not read")
    start = header_size + 12 * ncolors
    data = blob[start:start + bytes_per_line * height]
    if len(data) < bytes_per_line * height:
        raise ValueError(f"XWD: pixel data cut short ({len(data)} of {bytes_per_line * height} bytes)")
    return Image(width, height, bytes_per_line, bits_per_pixel, byte_order == 0,
                 (red_mask, green_mask, blue_mask), data)
