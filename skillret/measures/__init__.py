"""The measures, one module each, registered in :mod:`~skillret.measures.registry` beside their
definitions.

Each measure module registers itself, and the registry imports every module of this package
when it is first imported, so adding a measure is one new file (plus its tests): a docstring
stating the formula and edge cases, a kernel ``compute(ranking, k, rel) -> float64[n_queries]``
over a :class:`~skillret.measures.base.Ranking`, and a ``register(...)`` call. Metric names,
profiles, ``trec_eval``, the catalogue and the plots then know it; ``dvc.yaml``'s plot list is
checked against the table by the tests.

``registry.KERNELS`` (name -> kernel) and ``registry.DEFINITIONS`` (name -> definition) are live
read-only views of the table, in listing order.
"""
