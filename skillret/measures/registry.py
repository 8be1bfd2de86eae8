"""The one table of measures: each measure module registers itself here, beside its definition.

Everything that lists measures reads this table: metric names (:mod:`skillret.scoring.names`), the
engine's kernels, the built-in profiles and the drop-in ``trec_eval`` (the ``official`` ones), the
catalogue that ``skillret-eval profiles`` prints, and the pipeline's metric-vs-K plots (whose
``dvc.yaml`` list a test compares with this table). It plays the part of trec_eval's ``TREC_MEAS``
table and ir_measures' ``measures.register``.

A measure module ends with::

    MEASURE = register("NDCG", compute, __doc__, aliases=("ndcg_cut",), order=10, official=True)
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import numpy as np

    # compute(ranking: skillret.measures.base.Ranking, k: int, rel: int) -> float64[n_queries]
    Kernel = Callable[..., np.ndarray]

_NAME = re.compile(r"^[A-Za-z_]+$")  # what a metric name can spell (see skillret.scoring.names)


@dataclass(frozen=True)
class Measure:
    """A measure: its name, its kernel, its definition and the other names it answers to.

    name:       as written in metric names and outputs (``NDCG`` in ``NDCG@10``);
    compute:    the kernel, ``compute(ranking, k, rel) -> float64[n_queries]``, a pure function
                over a :class:`~skillret.measures.base.Ranking`;
    definition: the formula and edge cases (the module's docstring), printed by the catalogue;
    aliases:    other spellings accepted in metric names (``ndcg_cut``), any case;
    order:      where the measure is listed: tables, the catalogue, plots, ``trec_eval``'s keys;
    official:   one of the five measures SkillRet's official evaluator reports.
    """

    name: str
    compute: "Kernel"
    definition: str
    aliases: tuple[str, ...] = ()
    order: int = 1000
    official: bool = False

    def spellings(self) -> tuple[str, ...]:
        """Every lower-cased spelling that names this measure."""
        return tuple(dict.fromkeys(s.lower() for s in (self.name, *self.aliases)))


_TABLE: dict[str, Measure] = {}      # name -> measure
_SPELLINGS: dict[str, str] = {}      # lower-cased name or alias -> name


def register(name: str, compute: "Kernel", definition: str | None, *,
             aliases: tuple[str, ...] | list[str] = (), order: int = 1000,
             official: bool = False) -> Measure:
    """Add a measure to the table; a name or alias already taken (in any case) is refused."""
    measure = Measure(name, compute, (definition or "").strip(), tuple(aliases), order, official)
    for spelling in (name, *measure.aliases):
        if not _NAME.match(spelling):
            raise ValueError(f"measure name {spelling!r} must be letters and underscores only")
    if not measure.definition:
        raise ValueError(f"measure {name!r} needs a definition (its formula and edge cases)")
    taken = [s for s in measure.spellings() if s in _SPELLINGS]
    if taken:
        raise ValueError(f"measure {name!r}: {', '.join(taken)} already names "
                         f"{_SPELLINGS[taken[0]]!r}")
    _TABLE[name] = measure
    _SPELLINGS.update((s, name) for s in measure.spellings())
    return measure


def unregister(name: str) -> None:
    """Remove a measure and its aliases (for tests and plug-ins that register temporarily)."""
    measure = _TABLE.pop(name)
    for spelling in measure.spellings():
        _SPELLINGS.pop(spelling, None)


def lookup(spelling: str) -> Measure | None:
    """The measure a name or alias (any case) stands for, or None."""
    name = _SPELLINGS.get(spelling.lower())
    return None if name is None else _TABLE[name]


def get(name: str) -> Measure:
    """The measure registered under exactly ``name`` (KeyError otherwise)."""
    return _TABLE[name]


def all_measures() -> list[Measure]:
    """Every measure, in listing order (then by name)."""
    return sorted(_TABLE.values(), key=lambda m: (m.order, m.name))


def names() -> tuple[str, ...]:
    """Every measure's name, in listing order: ``("NDCG", "MAP", ..., "MRR")``."""
    return tuple(m.name for m in all_measures())


def official_names() -> tuple[str, ...]:
    """The official evaluator's measures, in its key order: NDCG, MAP, Recall, Precision,
    Completeness."""
    return tuple(m.name for m in all_measures() if m.official)


def spellings() -> dict[str, str]:
    """Every accepted spelling (lower case) -> the measure's name."""
    return dict(_SPELLINGS)


class _View(Mapping):
    """A read-only mapping of measure name -> one attribute, always current, in listing order."""

    def __init__(self, attribute: str):
        self._attribute = attribute

    def __getitem__(self, name: str):
        return getattr(get(name), self._attribute)

    def __iter__(self):
        return iter(names())

    def __len__(self) -> int:
        return len(names())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._attribute}: {', '.join(self)})"


KERNELS: Mapping = _View("compute")
DEFINITIONS: Mapping = _View("definition")

_SUPPORT = {"base", "registry"}  # the modules of the package that are not measures


def _register_measures() -> None:
    """Import every measure module of the package: each registers itself. A module importing
    this one first is already under way and registers itself when its import ends."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name not in _SUPPORT:
            importlib.import_module(f"{__package__}.{module.name}")


_register_measures()
