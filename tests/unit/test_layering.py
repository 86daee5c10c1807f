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
        "import sys, subtitler.mt.ssbd, subtitler.mt.translator, subtitler_research.bench.runner;"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('PySide6','shiboken6','llama_cpp','faster_whisper')];print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


ROOT = PKG.parent
RESEARCH = ROOT / "subtitler_research"
# Layers, lowest first: a module imports only from its own layer or lower ones, and the
# packages of one layer import each other without a loop. The entry points (the command lines
# and the self-test) sit on top with the UI.
LAYERS: list[tuple[str, ...]] = [
    (
        "subtitler",
        "subtitler.types",
        "subtitler.config",
        "subtitler.paths",
        "subtitler.resources",
        "subtitler.user_files",
        "subtitler.repeats",
    ),
    ("subtitler.isolation",),  # native engines in child processes (knows no engine)
    ("subtitler.audio", "subtitler.asr", "subtitler.mt", "subtitler.models"),
    ("subtitler.display",),  # what the reader sees: the pipeline, the page and the overlay use it
    ("subtitler.settings_store",),
    ("subtitler.pipeline",),
    ("subtitler.session",),
    ("subtitler.web",),
    (
        "subtitler.ui",
        "subtitler.app",
        "subtitler.selftest",
        "subtitler.models_cli",  # `subtitler models ...` (verify loads a file in its engine)
        "subtitler.models.__main__",  # `python -m subtitler.models`: runs models_cli, no more
    ),
    ("subtitler_research",),
]
# The engines: the UI reaches them only through subtitler.session.
ENGINES = (
    "subtitler.asr",
    "subtitler.audio",
    "subtitler.models",
    "subtitler.mt",
    "subtitler.pipeline",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges() -> dict[str, set[str]]:
    """Module -> the project modules it imports (absolute and relative, lazy ones too)."""
    edges: dict[str, set[str]] = {}
    for top in (PKG, RESEARCH):
        for f in top.rglob("*.py"):
            name = module_name(f)
            package = name if f.name == "__init__.py" else name.rpartition(".")[0]
            found = edges.setdefault(name, set())
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package.split(".")[: len(package.split(".")) - node.level + 1]
                        mod = ".".join([*base, *([node.module] if node.module else [])])
                    else:
                        mod = node.module or ""
                    found.add(mod)
                    found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import mod`
            edges[name] = {
                m for m in found if m.split(".")[0] in ("subtitler", "subtitler_research")
            }
    known = set(edges)
    return {a: {b for b in bs if b in known and b != a} for a, bs in edges.items()}


def layer_of(module: str) -> tuple[int, str]:
    """(rank, group): the longest matching prefix in LAYERS."""
    best = (-1, "", "")
    for rank, group in enumerate(LAYERS):
        for prefix in group:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[2]):
                best = (rank, prefix, prefix)
    assert best[0] >= 0, f"{module} is in no layer"
    return best[0], best[1]


def test_imports_run_down_the_layers() -> None:
    edges = import_edges()
    assert len(edges) > 60  # the scan saw both packages
    upward = [
        f"{a} -> {b}" for a, bs in edges.items() for b in bs if layer_of(b)[0] > layer_of(a)[0]
    ]
    assert upward == []


def test_the_product_never_imports_research() -> None:
    edges = import_edges()
    bad = [
        f"{a} -> {b}"
        for a, bs in edges.items()
        if a.split(".")[0] == "subtitler"
        for b in bs
        if b.split(".")[0] == "subtitler_research"
    ]
    assert bad == []


def test_no_import_loop_between_packages() -> None:
    """Between the groups of the layers (audio, asr, mt, models, pipeline, ...) the imports form
    no cycle: each group can be understood (and tested) with only the ones below it."""
    graph: dict[str, set[str]] = {}
    for a, bs in import_edges().items():
        ga = layer_of(a)[1]
        graph.setdefault(ga, set()).update(g for b in bs if (g := layer_of(b)[1]) != ga)
    state: dict[str, int] = {}
    loops: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                loops.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert loops == []
    assert {"subtitler.asr", "subtitler.audio", "subtitler.pipeline"} <= set(graph)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of ``graph`` with more than one node (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back() -> None:
    """No chain of imports, function-local ones included, leads from a module back to it: a
    loop hidden inside functions still ties the modules together."""
    assert cycles(import_edges()) == []
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_ui_reaches_engines_only_through_the_session() -> None:
    """The widgets import the engines (pipeline, models, translation, recognition, audio)
    from subtitler.session alone, which names what the UI uses of them."""
    edges = import_edges()
    ui = [a for a in edges if a == "subtitler.ui" or a.startswith("subtitler.ui.")]
    assert len(ui) > 10  # the scan saw the UI
    past = [
        f"{a} -> {b}"
        for a in ui
        for b in edges[a]
        if any(b == e or b.startswith(e + ".") for e in ENGINES)
    ]
    assert past == []
    assert "subtitler.session" in edges["subtitler.ui.app"]
