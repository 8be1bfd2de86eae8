"""The one table of measures (trec_eval's ``TREC_MEAS``, ir_measures' ``register``): each measure
module ends with ``MEASURE = register("NDCG", compute, __doc__, order=10, ...)``, and metric
names, the engine, the built-in profiles, ``trec_eval``, the catalogue and the plots read it.

Other tools' names are accepted in the forms those tools write them (``map_cut_K`` needs a
cutoff, ``recip_rank`` takes none); a name meaning different measures (:data:`AMBIGUOUS`) is
refused with what it could mean.

The shared input of every measure (:class:`Ranking`): a batch of queries' judged rankings, rows
queries and columns ranks 1..depth (the largest cutoff; for a metric without one, the whole
ranking and every positive judgment). A measure reads a column of a cumulative sum along the
ranks, computed once per batch; ``np.cumsum`` adds in rank order, as trec_eval's C loops do, so
per-query values are bit-identical to trec_eval's.
"""

from __future__ import annotations

import functools
import importlib
import math
import pkgutil
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

_NAME = re.compile(r"^[A-Za-z][A-Za-z_]*$")       # a measure's own name: letters, underscores
_SPELLING = re.compile(r"^[A-Za-z][A-Za-z_-]*$")  # an alias may hold hyphens too (r-precision)
#: A tool's way of writing a measure: ``K`` stands for the cutoff (``ndcg_cut_K``, ``nDCG@K``).
_TOOL_NAME = re.compile(r"^(?P<spelling>[A-Za-z][A-Za-z_-]*?)(?P<cut>@K|[_.]K)?$")
#: The tools whose names are accepted, in listing order.
TOOLS = ("trec_eval", "ir_measures", "ranx")

#: Names that mean different measures to different people: refused, with what they could mean.
AMBIGUOUS = {
    spelling: ("Success@K (Hit@K as skill-retrieval papers write it: a relevant skill in the "
               "top K)", "ranx's hits@K (how many relevant skills are in the top K: "
               "Precision@K x K, not computed here)")
    for spelling in ("hit", "hits")
}


@dataclass(frozen=True)
class Measure:
    """A measure: its name (``NDCG`` in ``NDCG@10``); its kernel ``compute(ranking, k, rel) ->
    float64[n_queries]`` over a :class:`Ranking` (``k`` None: the whole
    ranking); its definition (formula and edge cases: the module's docstring); other spellings
    (any case); where it is listed; whether the official evaluator reports it; its forms
    (``Name@K``, ``Name``); other tools' names (``{"trec_eval": ("ndcg_cut_K", "ndcg")}``, ``K``
    the cutoff); whether the metric-vs-K plots draw it.
    """

    name: str
    compute: Callable
    definition: str
    aliases: tuple[str, ...] = ()
    order: int = 1000
    official: bool = False
    cutoff: bool = True
    whole: bool = False
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    plotted: bool = False

    def forms(self) -> dict[str, tuple[bool, bool]]:
        """Lower-cased spelling -> (may have a cutoff, may have none): the measure's own forms
        for its name and aliases; for a tool's name, the forms that tool writes it in."""
        own = dict.fromkeys(s.lower() for s in (self.name, *self.aliases))
        out = {s: (self.cutoff, self.whole) for s in own}
        for names in self.tools.values():
            for written in names:
                match = _TOOL_NAME.match(written)
                spelling, cut = match["spelling"].lower(), match["cut"] is not None
                if spelling not in own:
                    has_cut, has_whole = out.get(spelling, (False, False))
                    out[spelling] = (has_cut or cut, has_whole or not cut)
        return out


_TABLE: dict[str, Measure] = {}      # name -> measure
_SPELLINGS: dict[str, Measure] = {}  # lower-cased name, alias or tool's name -> measure


def register(name: str, compute: Callable, definition: str | None, **fields) -> Measure:
    """Add a measure to the table (``fields``: :class:`Measure`'s, ``order=10, ...``); a name or
    alias already taken (in any case) is refused."""
    tools = {tool: tuple(names) for tool, names in fields.pop("tools", {}).items()}
    measure = Measure(name, compute, (definition or "").strip(),
                      aliases=tuple(fields.pop("aliases", ())), tools=tools, **fields)
    if not _NAME.match(name) or not all(map(_SPELLING.match, measure.aliases)):
        raise ValueError(f"measure {name!r}: a name must be letters and underscores only (an "
                         f"alias may hold hyphens too)")
    for tool, names in tools.items():
        if tool not in TOOLS:
            raise ValueError(f"measure {name!r}: unknown tool {tool!r} (known: "
                             f"{', '.join(TOOLS)})")
        for written in names:
            match = _TOOL_NAME.match(written)
            if not match or not (measure.cutoff if match["cut"] else measure.whole):
                raise ValueError(f"measure {name!r}: {tool} name {written!r} is not one of its "
                                 f"forms (Name@K, Name_K, Name.K with a cutoff; Name without)")
    if not (measure.cutoff or measure.whole):
        raise ValueError(f"measure {name!r} needs a form: with a cutoff, without, or both")
    if not measure.definition:
        raise ValueError(f"measure {name!r} needs a definition (its formula and edge cases)")
    taken = [s for s in measure.forms() if s in _SPELLINGS or s in AMBIGUOUS]
    if taken:
        owner = _SPELLINGS.get(taken[0])
        raise ValueError(f"measure {name!r}: {', '.join(taken)} already "
                         + (f"names {owner.name!r}" if owner else "is refused as ambiguous"))
    _TABLE[name] = measure
    _SPELLINGS.update((s, measure) for s in measure.forms())
    return measure


def lookup(spelling: str) -> Measure | None:
    """The measure a name or alias (any case) stands for, or None."""
    return _SPELLINGS.get(spelling.lower())


def all_measures() -> list[Measure]:
    """Every measure, in listing order (then by name)."""
    return sorted(_TABLE.values(), key=lambda m: (m.order, m.name))


def names(flag: str | None = None) -> tuple[str, ...]:
    """Every measure's name in listing order (``("NDCG", "MAP", ...)``), or those whose `flag`
    is set: ``"official"`` (the official evaluator's, in its key order), ``"plotted"`` (the
    metric-vs-K curves')."""
    return tuple(m.name for m in all_measures() if flag is None or getattr(m, flag))


def catalogue() -> list[dict]:
    """One row per measure, in listing order, for ``skillret-eval measures`` and the docs; its
    summary: the definition's first paragraph on one line, without the name it opens with
    (``NDCG@K: ``) nor the double backquotes of literals."""
    rows = []
    for m in all_measures():
        forms = ([f"{m.name}@K"] if m.cutoff else []) + ([m.name] if m.whole else [])
        first = " ".join(m.definition.split("\n\n", 1)[0].split())
        rows.append({"name": m.name, "forms": forms,
                     "summary": first.split(": ", 1)[-1].replace("``", ""),
                     "definition": m.definition,
                     "tools": {tool: list(m.tools.get(tool, ())) for tool in TOOLS},
                     "official": m.official, "aliases": list(m.aliases)})
    return rows


#: Grade of a retrieved skill that is not judged, and of the padding beyond the last result.
UNJUDGED = np.iinfo(np.int64).min

@functools.cache
def log2_discounts(depth: int) -> np.ndarray:
    """``log2(rank + 1)`` for ranks 1..depth, from the C library's ``log2`` (as trec_eval)."""
    return np.array([math.log2(rank + 1) for rank in range(1, depth + 1)], dtype=np.float64)


class Ranking:
    """Judged top-``depth`` rankings of ``n`` queries.

    grades:    int64 [n, depth], the grade of the skill at each rank; :data:`UNJUDGED` for a
               retrieved skill without judgment and for ranks past the end of the ranking.
               Negative judged grades are kept as written.
    retrieved: int64 [n], the number of results each query retrieved (the whole ranking).
    ideal:     float64 [n, depth], the query's positive judged grades sorted descending, 0-padded.
    relevant:  ``relevant(level)`` gives int64 [n], the number of judged skills with
               grade >= level (missed ones included).
    """

    def __init__(self, grades: np.ndarray, retrieved: np.ndarray, ideal: np.ndarray, relevant):
        self.grades = grades
        self.retrieved = retrieved
        self.ideal = ideal
        self.depth = grades.shape[1]
        self._relevant = relevant
        self._cache: dict = {}

    def _memo(self, key, build):
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = build()
        return value

    def relevant(self, level: int) -> np.ndarray:
        return self._memo(("relevant", level), lambda: np.asarray(self._relevant(level), np.int64))

    def is_relevant(self, level: int) -> np.ndarray:
        """bool [n, depth]: grade >= level (never true for unjudged or padding)."""
        return self._memo(("is_rel", level), lambda: self.grades >= level)

    def relevant_so_far(self, level: int) -> np.ndarray:
        """int64 [n, depth]: relevant results at ranks 1..k, for k = 1..depth."""
        return self._memo(("rel_cum", level),
                          lambda: np.cumsum(self.is_relevant(level), axis=1, dtype=np.int64))

    def discounted_gain_so_far(self) -> np.ndarray:
        """float64 [n, depth]: DCG at each cutoff; gain = grade when positive, else 0."""
        def build():
            gains = np.where(self.grades > 0, self.grades, 0).astype(np.float64)
            return np.cumsum(gains / log2_discounts(self.depth), axis=1)
        return self._memo("dcg_cum", build)

    def ideal_gain_so_far(self) -> np.ndarray:
        """float64 [n, depth]: ideal DCG at each cutoff."""
        return self._memo("idcg_cum",
                          lambda: np.cumsum(self.ideal / log2_discounts(self.depth), axis=1))

    def judged_so_far(self) -> np.ndarray:
        """int64 [n, depth]: judged results (any grade, negative ones too) at ranks 1..k."""
        return self._memo("judged_cum",
                          lambda: np.cumsum(self.grades != UNJUDGED, axis=1, dtype=np.int64))

    def precision_sum_so_far(self, level: int) -> np.ndarray:
        """float64 [n, depth]: sum of precision at each relevant rank within the cutoff."""
        def build():
            ranks = np.arange(1, self.depth + 1, dtype=np.float64)
            hits = self.is_relevant(level)
            precision = np.where(hits, self.relevant_so_far(level) / ranks, 0.0)
            return np.cumsum(precision, axis=1)
        return self._memo(("prec_cum", level), build)

    def first_relevant_rank(self, level: int) -> np.ndarray:
        """int64 [n]: rank of the first relevant result within depth, 0 when there is none."""
        def build():
            hits = self.is_relevant(level)
            first = np.argmax(hits, axis=1) + 1
            return np.where(hits.any(axis=1), first, 0).astype(np.int64)
        return self._memo(("first_rel", level), build)

    def column(self, matrix: np.ndarray, k: int | None) -> np.ndarray:
        """The value at cutoff k (the engine lays out ``depth >= k``); for ``k=None``, over the
        whole ranking (the last column)."""
        return matrix[:, -1 if k is None else k - 1]


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


# Every measure module of the package registers itself when imported. A module importing this
# one first is already under way and registers itself when its import ends.
for _module in pkgutil.iter_modules([str(Path(__file__).parent)]):
    if _module.name != "registry":
        importlib.import_module(f"{__package__}.{_module.name}")
