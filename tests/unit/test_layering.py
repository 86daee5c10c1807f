"""Engine packages never import Qt: only subtitler/ui may."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "subtitler"
QT = ("PySide6", "PyQt5", "PyQt6", "qtpy", "shiboken6")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_qt_outside_ui() -> None:
    offenders = []
    for f in PKG.rglob("*.py"):
        if "ui" in f.relative_to(PKG).parts[:1]:
            continue
        # The command line and the self-test are entry points that start UI code (like main.py).
        entry = f.relative_to(PKG).as_posix() in ("app.py", "selftest.py")
        for mod in imported_modules(f):
            if mod.split(".")[0] in QT or (mod.startswith("subtitler.ui") and not entry):
                offenders.append(f"{f.relative_to(PKG)} imports {mod}")
    assert offenders == []
    assert len(list(PKG.rglob("*.py"))) > 10  # the scan saw the package


def test_engine_import_loads_no_qt_and_no_llama() -> None:
    code = (
        "import sys, subtitler.mt.ssbd, subtitler.mt.translator, subtitler.bench.runner;"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('PySide6','shiboken6','llama_cpp','faster_whisper')];print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
