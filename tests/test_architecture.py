"""The package's shape: its import graph keeps the contracts of pyproject.toml's
``[tool.importlinter]`` (the layers, no cycle, argparse only in the CLI), checked by
import-linter, and is at most eight modules deep, counted on import-linter's graph (grimp).

A module's level is 1 + the largest level of the skillret modules it imports (1 when it imports
none), every import counted wherever it is written; a package ``__init__`` is a module like any
other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "skillret"
MAX_LEVELS = 8
#: the boundary (the API and the pipeline: load the inputs, call the core, write the outputs)
#: is one level, the CLI one more; every other module sits at most this deep
MAX_LEVEL_BELOW_BOUNDARY = 6
BOUNDARY = ("skillret.cli", "skillret.api", "skillret.pipeline")
MAX_TOP_LEVEL_MODULES = 12


@lru_cache(maxsize=None)
def levels() -> dict[str, int]:
    graph = grimp.build_graph("skillret", cache_dir=None)
    out: dict[str, int] = {}

    def level(module: str, path: tuple[str, ...] = ()) -> int:
        if module not in out:
            assert module not in path, f"import cycle: {' -> '.join(path + (module,))}"
            imported = graph.find_modules_directly_imported_by(module)
            out[module] = 1 + max((level(m, path + (module,)) for m in imported), default=0)
        return out[module]

    for module in graph.modules:
        level(module)
    return out


def test_import_contracts_hold():
    result = subprocess.run([Path(sys.executable).with_name("lint-imports"), "--no-cache"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_at_most_eight_levels():
    deepest = max(levels().items(), key=lambda item: item[1])
    assert deepest[1] <= MAX_LEVELS, deepest


def test_everything_but_the_cli_and_the_boundary_leaves_room_for_them():
    too_deep = {m: lv for m, lv in levels().items()
                if not m.startswith(BOUNDARY) and lv > MAX_LEVEL_BELOW_BOUNDARY}
    assert too_deep == {}


def test_subpackage_inits_hold_only_their_docstring():
    for path in PACKAGE.glob("*/__init__.py"):
        if path.parent.name == "cli":  # it re-exports main and run, the console script's
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) \
            and isinstance(body[0].value, ast.Constant), path


def test_few_modules_at_the_top():
    assert len(list(PACKAGE.glob("*.py"))) <= MAX_TOP_LEVEL_MODULES
