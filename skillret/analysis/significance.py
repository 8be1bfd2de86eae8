"""Paired significance tests over per-query values: pure numpy on arrays (scipy for one tail).

The tests compare a *run* with a *baseline* query by query. Every function takes the per-query
values as arrays of shape ``(n_queries,)`` or ``(n_queries, n_pairs)``: column ``j`` is one
(run, metric) pair, and every column is tested against the same random draws in one matrix
product, so 120 pairs cost about what one does.

``paired_tests(baseline, run, ...)`` returns, per column, a dict:

``baseline``, ``run``
    the means (``math.fsum`` over the count: the all-judged profiles' arithmetic).
``delta``
    ``run - baseline`` of those means.
``ci95``
    the bootstrap percentile interval of the mean difference: ``bootstrap`` resamples of the
    queries with replacement (the same resamples for every column), the 2.5th and 97.5th
    percentiles of their mean differences (numpy's linear interpolation); ``None`` when
    ``bootstrap`` is 0.
``t``, ``p_t``
    the two-sided paired t-test (``scipy.stats.ttest_rel``): ``t = mean(d) / (sd(d) / sqrt(n))``
    with ``n - 1`` degrees of freedom. When every difference is 0, ``t = 0`` and ``p_t = 1``
    (scipy gives nan). When the differences are equal but not 0 (no variance), ``t`` is
    infinite, signed like the difference, and ``p_t = 0``, scipy's limit (the JSON output writes
    the infinite ``t`` as ``null``). With one query there is no variance to test: ``t`` and
    ``p_t`` are ``None`` unless the difference is 0.
``p_randomization``
    the two-sided paired randomization (sign-flip) test of the mean difference. Under the null
    hypothesis the sign of each query's difference is a coin flip; ``m`` = ``permutations``
    random sign vectors are drawn, ``b`` counts those whose ``|sum(s * d)|`` reaches the
    observed ``|sum(d)|``, and ``p = (b + 1) / (m + 1)``, which is never 0 (the observed
    signs count as one draw). "Reaches" allows a relative tolerance of ``TIE_TOLERANCE`` times
    ``sum(|d|)``, so that a flip giving the observed sum in another floating-point order counts
    as a tie, as it is. When ``2 ** n <= permutations`` (or ``exact=True``) every one of the
    ``2 ** n`` sign vectors is enumerated instead and ``p = b / 2 ** n``, the exact value.
``wins``, ``ties``, ``losses``
    queries where the run's value is higher, equal (bitwise), lower.

Reproducibility: the draws come from ``numpy.random.Generator(PCG64)`` seeded with
``SeedSequence(seed)``, one child stream for the sign flips and one for the bootstrap, each drawn
block after block in one thread, so the same seed gives the same numbers whatever the number of
columns, the block size or the BLAS threads (the sign flips' sums go through a matrix product,
whose rounding the tie tolerance absorbs; the bootstrap's means are summed in query order). The
sign vectors depend only on the seed and the number of queries.

The family-wide correction is a separate step (:func:`adjust`), so callers that test within
strata can adjust over the whole family at once.
"""

from __future__ import annotations

import math

import numpy as np

TIE_TOLERANCE = 1e-9
BLOCK = 1000  # draws per block: 1,000 x 4,392 queries is 35 MB of float64
CORRECTIONS = ("holm", "bh", "none")


def _columns(values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError("per-query values must be a vector or a (queries, pairs) matrix")
    return array


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    flips, resamples = np.random.SeedSequence(int(seed)).spawn(2)
    return (np.random.Generator(np.random.PCG64(flips)),
            np.random.Generator(np.random.PCG64(resamples)))


def flip_generator(seed: int) -> np.random.Generator:
    """The generator of the sign flips :func:`paired_tests` draws for ``seed``."""
    return _streams(seed)[0]


def paired_tests(baseline, run, *, permutations: int = 10000, bootstrap: int = 2000,
                 seed: int = 0, exact: bool | None = None, block: int = BLOCK) -> list[dict]:
    """The paired tests of ``run`` against ``baseline``, one dict per column (see the module).

    ``exact``: ``None`` enumerates every sign vector when ``2 ** n <= permutations``; ``True``
    always does (only for small ``n``); ``False`` never does.
    """
    base, other = _columns(baseline), _columns(run)
    if base.shape != other.shape:
        raise ValueError(f"baseline and run shapes differ: {base.shape} vs {other.shape}")
    n = base.shape[0]
    if n == 0:
        raise ValueError("no query to compare")
    if permutations < 1 or bootstrap < 0:
        raise ValueError("permutations must be >= 1 and bootstrap >= 0")
    diffs = other - base
    flips, resamples = _streams(seed)
    use_exact = (2 ** n <= permutations) if exact is None else bool(exact)
    p_rand = (exact_sign_flip_p(diffs, block=block) if use_exact
              else sign_flip_p(diffs, permutations, flips, block=block))
    t, p_t = t_test(diffs)
    interval = bootstrap_interval(diffs, bootstrap, resamples, block=block) if bootstrap else None
    wins, losses = (diffs > 0).sum(axis=0), (diffs < 0).sum(axis=0)
    out = []
    for j in range(diffs.shape[1]):
        mean_base = math.fsum(base[:, j]) / n
        mean_run = math.fsum(other[:, j]) / n
        out.append({
            "baseline": mean_base,
            "run": mean_run,
            "delta": mean_run - mean_base,
            "ci95": None if interval is None else (float(interval[0, j]), float(interval[1, j])),
            "t": t[j],
            "p_t": p_t[j],
            "p_randomization": float(p_rand[j]),
            "randomization": "exact" if use_exact else "monte-carlo",
            "wins": int(wins[j]),
            "ties": int(n - wins[j] - losses[j]),
            "losses": int(losses[j]),
        })
    return out


def t_test(diffs) -> tuple[list[float | None], list[float | None]]:
    """Two-sided paired t-test per column of differences (``scipy.stats.ttest_rel``)."""
    from scipy.special import stdtr

    d = _columns(diffs)
    n = d.shape[0]
    ts: list[float | None] = []
    ps: list[float | None] = []
    rows = _rows(d)
    mean = rows.mean(axis=1)
    var = rows.var(axis=1, ddof=1) if n > 1 else np.zeros(d.shape[1])
    constant = (d == d[:1]).all(axis=0)
    nonzero = d.any(axis=0)
    tested = nonzero & ~constant & (var != 0.0) if n >= 2 else np.zeros(d.shape[1], bool)
    t_all = np.zeros(d.shape[1])
    t_all[tested] = mean[tested] / np.sqrt(var[tested] / n)
    # one call for every tested column (stdtr is a ufunc): the same values as one by one
    p_all = np.minimum(1.0, 2.0 * stdtr(n - 1, -np.abs(t_all))) if tested.any() else t_all
    for j in range(d.shape[1]):
        if not nonzero[j]:
            ts.append(0.0)
            ps.append(1.0)
        elif n < 2:
            ts.append(None)
            ps.append(None)
        elif not tested[j]:
            ts.append(math.copysign(math.inf, mean[j]))
            ps.append(0.0)
        else:
            ts.append(float(t_all[j]))
            ps.append(float(p_all[j]))
    return ts, ps


def _rows(d: np.ndarray) -> np.ndarray:
    """The columns of ``d`` as contiguous rows: a reduction along a row adds its terms in one
    order, whatever the number of columns, so every column's sums, means and variances have the
    bits they have alone (:mod:`skillret.analysis.memo` relies on it). A reduction down the
    columns of ``d`` itself would not: numpy vectorizes it across columns, and the rounding
    changes with their number."""
    return np.ascontiguousarray(d.T)


def _column_sums(d: np.ndarray) -> np.ndarray:
    return _rows(d).sum(axis=1)


def _tolerance(d: np.ndarray) -> np.ndarray:
    return TIE_TOLERANCE * _column_sums(np.abs(d))


def sign_flip_p(diffs, permutations: int, rng: np.random.Generator, *,
                block: int = BLOCK) -> np.ndarray:
    """Monte Carlo two-sided sign-flip p-values, ``(b + 1) / (m + 1)``, one per column.

    Each draw is one row of random bits, ``ceil(n / 64)`` raw 64-bit outputs of the generator
    (little-endian bytes, least significant bit first, the first ``n`` bits used); a set bit flips
    that query's sign. Draws are whole words, so blocks of any size give the same sequence.
    ``sum(s * d) = sum(d) - 2 * bits @ d``: one matrix product per block serves every column.
    """
    d = _columns(diffs)
    total = _column_sums(d)
    observed = np.abs(total) - _tolerance(d)
    hits = np.zeros(d.shape[1], dtype=np.int64)
    for bits in _flip_bits(d.shape[0], permutations, rng, block):
        sums = total - 2.0 * (bits @ d)
        hits += (np.abs(sums) >= observed).sum(axis=0)
    return (hits + 1) / (permutations + 1)


def _flip_bits(n: int, permutations: int, rng: np.random.Generator, block: int):
    """The sign-flip draws of :func:`sign_flip_p`, block after block (``rows x n`` of 0/1)."""
    words = (n + 63) // 64
    done = 0
    while done < permutations:
        rows = min(block, permutations - done)
        raw = rng.bit_generator.random_raw(rows * words).astype("<u8", copy=False)
        raw = raw.view(np.uint8).reshape(rows, words * 8)
        yield np.unpackbits(raw, axis=1, count=n, bitorder="little").astype(np.float64)
        done += rows


def sign_flip_p_pairs(values, low, high, permutations: int, rng: np.random.Generator, *,
                      block: int = BLOCK) -> np.ndarray:
    """:func:`sign_flip_p` of the columns ``values[:, high] - values[:, low]`` (one per pair),
    with the same draws, for many pairs of few columns (every pair of 30 runs): a block's
    ``bits @ d`` of each pair is the difference of two columns of ``bits @ values``, one
    product over the runs' columns instead of one over the pairs'. The sums differ from
    :func:`sign_flip_p`'s only by rounding, which the tie tolerance absorbs, so the p-values are
    :func:`sign_flip_p`'s.
    """
    v = _columns(values)
    low, high = np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
    d = v[:, high] - v[:, low]
    total = _column_sums(d)
    observed = np.abs(total) - _tolerance(d)
    del d
    hits = np.zeros(len(high), dtype=np.int64)
    for bits in _flip_bits(v.shape[0], permutations, rng, block):
        projected = bits @ v
        sums = total - 2.0 * (projected[:, high] - projected[:, low])
        hits += (np.abs(sums) >= observed).sum(axis=0)
    return (hits + 1) / (permutations + 1)


def exact_sign_flip_p(diffs, *, block: int = BLOCK) -> np.ndarray:
    """Exact two-sided sign-flip p-values: all ``2 ** n`` sign vectors, ``p = b / 2 ** n``."""
    d = _columns(diffs)
    n = d.shape[0]
    if n > 24:
        raise ValueError(f"exact enumeration of 2^{n} sign vectors is too large")
    total = _column_sums(d)
    observed = np.abs(total) - _tolerance(d)
    hits = np.zeros(d.shape[1], dtype=np.int64)
    shifts = np.arange(n, dtype=np.int64)
    count = 1 << n
    for start in range(0, count, block):
        codes = np.arange(start, min(start + block, count), dtype=np.int64)
        bits = ((codes[:, None] >> shifts) & 1).astype(np.float64)
        sums = total - 2.0 * (bits @ d)
        hits += (np.abs(sums) >= observed).sum(axis=0)
    return hits / count


def bootstrap_interval(diffs, resamples: int, rng: np.random.Generator, *,
                       block: int = BLOCK, level: float = 0.95) -> np.ndarray:
    """Percentile interval of the mean difference: a ``(2, n_pairs)`` array (low, high).

    Each resample draws ``n`` query indices with replacement, ``floor(u * n)`` for uniform
    doubles ``u`` (one 64-bit output each, so blocks of any size give the same sequence); per
    block the draws become a ``rows x n`` matrix of counts, and ``counts @ d / n`` gives every
    column's resampled means, summed by ``np.einsum`` without BLAS: it adds each mean's terms in
    query order, so its bits depend only on its draw and its column, not on the block size or on
    the other columns (a BLAS product's rounding depends on the matrix's shape).
    """
    d = _columns(diffs)
    n = d.shape[0]
    rows_d = _rows(d)
    means = np.empty((resamples, d.shape[1]))
    # floor(u * n) is below 2**31 for any n numpy can hold here: the cast to int32 truncates
    # as the cast to int64 does (the values are >= 0) at a fifth of its cost on this numpy
    index = np.int32 if n < 2 ** 31 else np.int64
    done = 0
    while done < resamples:
        rows = min(block, resamples - done)
        picks = (rng.random((rows, n)) * n).astype(index)
        np.minimum(picks, n - 1, out=picks)
        flat = picks + (np.arange(rows, dtype=np.int64) * n)[:, None]  # int64: rows * n
        counts = np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        means[done:done + rows] = _resampled_sums(counts, rows_d) / n
        done += rows
    tail = (1.0 - level) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=0)


#: the least work (multiply-adds) for which the bootstrap's sums are split over threads
SPLIT_WORK = 20_000_000


def _threads() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _resampled_sums(counts: np.ndarray, rows_d: np.ndarray) -> np.ndarray:
    """``counts @ rows_d.T`` (resamples x columns) by ``np.einsum`` without BLAS, each sum's
    terms added in query order. A column's sums depend on its own row of ``rows_d`` only, so
    with many columns they are split into groups of columns, one per core (einsum releases the
    GIL), and joined: the same bits as in one call."""
    work = counts.shape[0] * counts.shape[1] * rows_d.shape[0]
    threads = min(_threads(), rows_d.shape[0]) if work >= SPLIT_WORK else 1
    if threads < 2:
        return np.einsum("rn,cn->rc", counts, rows_d, optimize=False)
    from concurrent.futures import ThreadPoolExecutor

    edges = np.linspace(0, rows_d.shape[0], threads + 1).astype(int)
    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(lambda lo, hi: np.einsum("rn,cn->rc", counts, rows_d[lo:hi],
                                                       optimize=False),
                              edges[:-1], edges[1:]))
    return np.concatenate(parts, axis=1)


def adjust(pvalues, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons over the whole family given.

    ``holm``: Holm's step-down (controls the family-wise error rate);
    ``bh``: Benjamini-Hochberg step-up (controls the false discovery rate);
    ``none``: unchanged. Adjusted values are capped at 1 and keep the input order.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r} (known: {', '.join(CORRECTIONS)})")
    m = p.size
    if method == "none" or m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        stepped = np.minimum.accumulate((m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


# --- the record of a test, as reported --------------------------------------------------------

def _round(value, digits: int | None):
    """``value`` rounded to ``digits``; as it is when ``digits`` is None."""
    return value if digits is None else round(value, digits)


def round_p(value):
    """p-values to 4 significant digits (they come from at most 10^4-10^5 draws)."""
    return None if value is None else float(f"{value:.4g}")


def test_record(s: dict, p_adjusted: float, alpha: float, rounding: int | None) -> dict:
    """One paired test (``s``, from :func:`paired_tests`) as reported: means, delta and
    interval rounded to ``rounding`` digits, p-values to 4 significant digits, and
    ``significant`` when the adjusted p-value is at most ``alpha``."""
    t = s["t"]
    return {
        "baseline": _round(s["baseline"], rounding),
        "run": _round(s["run"], rounding),
        "delta": _round(s["delta"], rounding),
        "ci95": None if s["ci95"] is None else [_round(v, rounding) for v in s["ci95"]],
        "t": None if t is None or math.isinf(t) else round(t, 4),
        "p_t": round_p(s["p_t"]),
        "p_randomization": round_p(s["p_randomization"]),
        "p_adjusted": round_p(p_adjusted),
        "significant": bool(p_adjusted <= alpha),
        "wins": s["wins"],
        "ties": s["ties"],
        "losses": s["losses"],
    }


__all__ = ["paired_tests", "t_test", "sign_flip_p", "sign_flip_p_pairs", "exact_sign_flip_p",
           "bootstrap_interval", "flip_generator", "adjust", "test_record", "round_p",
           "CORRECTIONS", "TIE_TOLERANCE"]
