"""The one table of measures (trec_eval's ``TREC_MEAS``, ir_measures' ``register``): each measure
module ends with ``MEASURE = register("NDCG", compute, __doc__, order=10, ...)``, and metric
names, the engine, the built-in profiles, ``trec_eval``, the catalogue and the plots read it.

Other tools' names are accepted in the forms those tools write them (``map_cut_K`` needs a
cutoff, ``recip_rank`` takes none); a name meaning different measures (:data:`AMBIGUOUS`) is
refused with what it could mean.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
    float64[n_queries]`` over a :class:`~skillret.measures.base.Ranking` (``k`` None: the whole
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

    def other_names(self) -> tuple[str, ...]:
        """The aliases, then every tool's names, each once (``K``: the cutoff)."""
        return tuple(dict.fromkeys(
            [*self.aliases, *(w for tool in TOOLS for w in self.tools.get(tool, ()))]))


_TABLE: dict[str, Measure] = {}      # name -> measure
_SPELLINGS: dict[str, str] = {}      # lower-cased name or alias -> name


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
                         + (f"names {owner!r}" if owner else "is refused as ambiguous"))
    _TABLE[name] = measure
    _SPELLINGS.update((s, name) for s in measure.forms())
    return measure


def lookup(spelling: str) -> Measure | None:
    """The measure a name or alias (any case) stands for, or None."""
    name = _SPELLINGS.get(spelling.lower())
    return None if name is None else _TABLE[name]


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


# Every measure module of the package registers itself when imported. A module importing this
# one first is already under way and registers itself when its import ends.
for _module in pkgutil.iter_modules([str(Path(__file__).parent)]):
    if _module.name not in ("base", "registry"):
        importlib.import_module(f"{__package__}.{_module.name}")
