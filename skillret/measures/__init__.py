"""The measures, one module each: a docstring stating the formula and edge cases, a kernel
``compute(ranking, k, rel) -> float64[n_queries]`` over a :class:`~skillret.measures.base.Ranking`
and a ``register(...)`` call. The registry imports every module of this package, so adding a
measure is one new file (plus its tests).
"""
