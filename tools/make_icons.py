"""Draw the app icon and write assets/icon.png, icon-256.png, icon-512.png, icon.ico, icon.icns.

    python tools/make_icons.py [--out assets]

A speech bubble with two subtitle lines, drawn with Qt's QPainter offscreen (PySide6 is a
dependency of the app already). The .ico (PNG-compressed entries) and .icns (PNG-based
'ic07'..'ic10' entries) containers are written by hand, so no other tool is needed; outputs
are committed, run this only to change the icon.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# icns types holding PNG data: 128, 256, 512, 1024 px (and the @2x variants of the smaller).
ICNS_TYPES = (
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)


def render(size: int) -> bytes:
    """The icon at ``size`` x ``size`` as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
    from PySide6.QtGui import (
        QColor,
        QGuiApplication,
        QImage,
        QLinearGradient,
        QPainter,
        QPainterPath,
        QPen,
    )

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    s = size / 512.0
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    # Rounded square tile (macOS-style margins), blue gradient.
    tile = QRectF(32 * s, 32 * s, 448 * s, 448 * s)
    grad = QLinearGradient(tile.topLeft(), tile.bottomRight())
    grad.setColorAt(0.0, QColor("#3b82f6"))
    grad.setColorAt(1.0, QColor("#1e3a8a"))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(grad)
    p.drawRoundedRect(tile, 100 * s, 100 * s)
    # Speech bubble with a tail at the lower left.
    bubble = QPainterPath()
    bubble.addRoundedRect(QRectF(96 * s, 118 * s, 320 * s, 210 * s), 48 * s, 48 * s)
    tail = QPainterPath()
    tail.moveTo(QPointF(150 * s, 300 * s))
    tail.lineTo(QPointF(128 * s, 396 * s))
    tail.lineTo(QPointF(232 * s, 320 * s))
    tail.closeSubpath()
    p.setBrush(QColor("#ffffff"))
    p.drawPath(bubble.united(tail))
    # Two subtitle lines: a long one and a shorter one, plus a highlighted word.
    pen = QPen(QColor("#1e3a8a"), 26 * s, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    p.setPen(pen)
    p.drawLine(QPointF(150 * s, 190 * s), QPointF(362 * s, 190 * s))
    p.drawLine(QPointF(150 * s, 256 * s), QPointF(270 * s, 256 * s))
    pen.setColor(QColor("#f59e0b"))
    p.setPen(pen)
    p.drawLine(QPointF(312 * s, 256 * s), QPointF(362 * s, 256 * s))
    p.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")  # type: ignore[call-overload]  # PySide6 accepts str
    buf.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico with one PNG-compressed image per size (Vista and later read these)."""
    sizes = sorted(pngs)
    head = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for n in sizes:
        data = pngs[n]
        dim = 0 if n >= 256 else n  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
        blobs += data
    return head + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """An Apple .icns whose entries are PNG images."""
    body = b"".join(tag + struct.pack(">I", 8 + len(pngs[n])) + pngs[n] for tag, n in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "assets")
    a = ap.parse_args(argv)
    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    sizes = sorted({*ICO_SIZES, *(n for _, n in ICNS_TYPES)})
    pngs = {n: render(n) for n in sizes}
    (out / "icon.png").write_bytes(pngs[256])
    (out / "icon-256.png").write_bytes(pngs[256])
    (out / "icon-512.png").write_bytes(pngs[512])
    (out / "icon.ico").write_bytes(ico({n: pngs[n] for n in ICO_SIZES}))
    (out / "icon.icns").write_bytes(icns(pngs))
    for name in ("icon.png", "icon-256.png", "icon-512.png", "icon.ico", "icon.icns"):
        print(f"{out / name} ({(out / name).stat().st_size / 1000:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
