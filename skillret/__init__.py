"""skillret-eval: retrieval evaluation for agent skills, exact to SkillRet's official numbers.

    >>> import skillret
    >>> skillret.evaluate("qrels.jsonl", "run.trec")                # official profile
    >>> skillret.evaluate(qrels_dict, run_dict, profile="mia5150")
    >>> skillret.trec_eval(qrels_dict, results_dict)                # SkillRet's drop-in
    >>> skillret.fuse(["bm25.trec", "dense.trec"], method="rrf")    # a fused run

Names are imported lazily so that `import skillret` (and the CLI's start-up) stays cheap.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: module -> the names it exports (`BUILTIN_PROFILES` is `scoring.profiles.BUILTIN`)
_EXPORTS = {
    "api": ("evaluate", "per_query", "trec_eval", "score", "validate", "fuse"),
    "scoring.evaluator": ("Evaluator",),
    "scoring.aggregate": ("Scores",),
    "io.readers": ("read_qrels", "open_run"),
    "columnar.runs": ("Run",),
    "columnar.qrels": ("Qrels",),
    "scoring.profiles": ("Profile", "BUILTIN_PROFILES", "resolve_profiles"),
    "scoring.names": ("Metric", "parse_metric", "format_metric"),
    "errors": ("InputError",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'skillret' has no attribute {name!r}")
    module = importlib.import_module(f".{_MODULE_OF[name]}", __name__)
    value = getattr(module, "BUILTIN" if name == "BUILTIN_PROFILES" else name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
