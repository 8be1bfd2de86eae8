"""The measures, one module each, registered in :mod:`~skillret.measures.registry` beside their
definitions.

Every module of this package is imported here, and each measure module registers itself, so
adding a measure is one new file (plus its tests): a docstring stating the formula and edge
cases, a kernel ``compute(ranking, k, rel) -> float64[n_queries]`` over a
:class:`~skillret.measures.base.Ranking`, and a ``register(...)`` call. Metric names, profiles,
``trec_eval``, the catalogue and the plots then know it; ``dvc.yaml``'s plot list is checked
against the table by the tests.

``KERNELS`` (name -> kernel) and ``DEFINITIONS`` (name -> definition) are live read-only views of
the table, in listing order.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from skillret.measures import registry
from skillret.measures.base import Ranking, log2_discounts
from skillret.measures.registry import Measure, register, unregister

_SUPPORT = {"base", "registry"}  # the modules that are not measures

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _SUPPORT:
        importlib.import_module(f"{__name__}.{_module.name}")


class _View(Mapping):
    """A read-only mapping of measure name -> one attribute, always current, in listing order."""

    def __init__(self, attribute: str):
        self._attribute = attribute

    def __getitem__(self, name: str):
        return getattr(registry.get(name), self._attribute)

    def __iter__(self):
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._attribute}: {', '.join(self)})"


KERNELS: Mapping = _View("compute")
DEFINITIONS: Mapping = _View("definition")

__all__ = ["KERNELS", "DEFINITIONS", "Measure", "Ranking", "log2_discounts", "register",
           "registry", "unregister"]
