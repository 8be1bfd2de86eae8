"""The package's shape (#19): the import graph of skillret/, read with ``ast`` from the source.

An edge is any import of a skillret module, wherever it is written (module level, inside a
function, under ``if TYPE_CHECKING``), relative or absolute; ``from skillret.x import y`` is an
edge to ``skillret.x.y`` when that is a module, else to ``skillret.x``. A module's level is 1 + the
largest level of the modules it imports (1 when it imports none); a package ``__init__`` is a
module like any other.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "skillret"
MAX_LEVELS = 8
#: The boundary (``skillret/api.py`` and the pipeline: load the inputs, call the core, write the
#: outputs) is one level, the CLI one more; below them go the modules of every other layer.
BOUNDARY = ("api", "pipeline")
MAX_LEVEL_BELOW_PIPELINE = 6
COMPUTATION = ("columnar", "io", "scoring", "validation", "analysis", "measures")
PRESENTATION = ("render", "cli")
MAX_TOP_LEVEL_MODULES = 12

#: Functions still in a computation module that belong to the CLI and the pipeline, and import
#: renderers until they move to skillret/cli/ and skillret/pipeline/ (#19, the CLI/pipeline
#: rework). Only their imports are exempt; remove an entry once its function has moved.
AWAITING_MOVE: dict[str, set[str]] = {}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=None)
def modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _targets(module: str, node: ast.AST) -> list[tuple[str, str | None]]:
    """(imported module, name imported from it or None) for one import statement."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.split(".")
        if modules()[module].name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    return [(source, a.name) for a in node.names]


def _module_of(source: str, name: str | None) -> str | None:
    """The skillret module an import loads: ``source.name`` when that is a module."""
    if not source.startswith("skillret"):
        return None
    if name is not None and f"{source}.{name}" in modules():
        return f"{source}.{name}"
    while source not in modules() and "." in source:
        source = source.rsplit(".", 1)[0]
    return source if source in modules() else None


def imports(exempt: bool = False) -> dict[str, dict[str, list[tuple[str | None, str | None]]]]:
    """``{module: {imported module: [(name imported, enclosing function), ...]}}``; with
    ``exempt``, imports inside the functions of :data:`AWAITING_MOVE` are left out."""
    graph: dict[str, dict] = {}
    for module, path in modules().items():
        edges: dict[str, list] = {}
        skip = AWAITING_MOVE.get(module, set()) if exempt else set()

        def visit(node: ast.AST, function: str | None) -> None:
            for child in ast.iter_child_nodes(node):
                inner = child.name if isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef)) and function is None \
                    else function
                if inner in skip:
                    continue
                for source, name in _targets(module, child):
                    target = _module_of(source, name)
                    if target is not None and target != module:
                        edges.setdefault(target, []).append((name, inner))
                visit(child, inner)

        visit(ast.parse(path.read_text(encoding="utf-8")), None)
        graph[module] = edges
    return graph


def levels(graph) -> dict[str, int]:
    out: dict[str, int] = {}

    def level(module: str, path: tuple = ()) -> int:
        if module not in out:
            if module in path:
                raise AssertionError(f"import cycle: {' -> '.join(path + (module,))}")
            out[module] = 1 + max((level(m, path + (module,)) for m in graph[module]), default=0)
        return out[module]

    for module in graph:
        level(module)
    return out


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return found


def _in(module: str, packages) -> bool:
    return any(module == f"skillret.{p}" or module.startswith(f"skillret.{p}.")
               for p in packages)


def test_no_import_cycle():
    assert _cycles(imports()) == []


def test_at_most_eight_levels():
    deepest = max(levels(imports()).items(), key=lambda item: item[1])
    assert deepest[1] <= MAX_LEVELS, deepest


def test_everything_but_the_cli_and_the_pipeline_leaves_room_for_them():
    too_deep = {m: lv for m, lv in levels(imports()).items()
                if not _in(m, ("cli", *BOUNDARY)) and lv > MAX_LEVEL_BELOW_PIPELINE}
    assert too_deep == {}


def test_computation_never_imports_rendering_or_the_cli():
    wrong = {m: sorted(t for t in edges if _in(t, PRESENTATION))
             for m, edges in imports(exempt=True).items() if _in(m, COMPUTATION)}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_functions_awaiting_their_move_still_exist():
    """An entry of AWAITING_MOVE whose function has moved exempts nothing: remove it."""
    for module, functions in AWAITING_MOVE.items():
        tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert functions <= defined, f"{module}: {sorted(functions - defined)} moved"


def test_nothing_imports_an_export_through_the_package():
    init = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    exports = next(ast.literal_eval(n.value) for n in init.body if isinstance(n, ast.Assign)
                   and any(getattr(t, "id", None) == "_EXPORTS" for t in n.targets))
    through = {m: sorted(name for name, _ in edges["skillret"] if name is None or name in exports)
               for m, edges in imports().items() if m != "skillret" and "skillret" in edges}
    assert {m: names for m, names in through.items() if names} == {}


def test_subpackage_inits_hold_only_their_docstring():
    for path in PACKAGE.glob("*/__init__.py"):
        if path.parent.name == "cli":  # it re-exports main and run, the console script's
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) \
            and isinstance(body[0].value, ast.Constant), path


def test_few_modules_at_the_top():
    assert len(list(PACKAGE.glob("*.py"))) <= MAX_TOP_LEVEL_MODULES


def test_only_the_cli_parses_arguments():
    parsers = sorted(m for m, path in modules().items() if not _in(m, ("cli",))
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     for source, _ in _targets(m, node) if source.split(".")[0] == "argparse")
    assert parsers == []
