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

_EXPORTS = {
    "evaluate": "api",
    "per_query": "api",
    "trec_eval": "api",
    "score": "api",
    "Evaluator": "api",
    "Scores": "scoring.scores",
    "validate": "api",
    "read_qrels": "io.readers",
    "open_run": "io.readers",
    "Run": "columnar.runs",
    "Qrels": "columnar.qrels",
    "Profile": "scoring.profiles",
    "BUILTIN_PROFILES": ("scoring.profiles", "BUILTIN"),
    "resolve_profiles": "scoring.profiles",
    "Metric": "scoring.names",
    "parse_metric": "scoring.names",
    "format_metric": "scoring.names",
    "InputError": "errors",
    "fuse": "api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'skillret' has no attribute {name!r}")
    module, attr = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
