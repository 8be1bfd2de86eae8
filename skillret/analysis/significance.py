"""Paired significance tests over per-query values, in numpy (scipy.special for the t tail).

Every function takes per-query values of shape `(n_queries,)` or `(n_queries, n_pairs)`: column
`j` is one (run, metric) pair, and every column is tested against the same random draws, one
matrix product per block of draws. `paired_tests` returns, per column, a dict:

- `baseline`, `run`: the means (`math.fsum` over the count); `delta`: `run - baseline`.
- `ci95`: the bootstrap percentile interval of the mean difference (`bootstrap` resamples of the
  queries, the same for every column; numpy's linear interpolation); None when `bootstrap` is 0.
- `t`, `p_t`: the two-sided paired t-test (`scipy.stats.ttest_rel`'s numbers). Every difference
  0: `t = 0`, `p_t = 1` (scipy gives nan); equal differences but not 0: `t` infinite, signed
  like the difference, `p_t = 0` (scipy's limit); one query: None unless the difference is 0.
- `p_randomization`: the two-sided sign-flip test of the mean difference: `m = permutations`
  random sign vectors, `b` of them with `|sum(s * d)|` reaching the observed `|sum(d)|` (within
  `TIE_TOLERANCE * sum(|d|)`, so that the same sum in another rounding order is a tie), and
  `p = (b + 1) / (m + 1)`. When `2 ** n <= permutations` (or `exact=True`) all `2 ** n` sign
  vectors are enumerated and `p = b / 2 ** n`.
- `wins`, `ties`, `losses`: queries where the run's value is higher, equal (bitwise), lower.

The draws come from `Generator(PCG64)` seeded with `SeedSequence(seed)`, one child stream for
the flips and one for the bootstrap, so the same seed gives the same numbers whatever the number
of columns, the block size or the BLAS threads. Every sum runs along a column's own contiguous
copy, so a column's numbers are the same bits alone or among others. The family-wide
correction is a separate step (`adjust`), so that callers testing within strata adjust once.

Written here rather than with scipy.stats, whose import would slow every compare and report
process: its variance rounds differently from one column to the next, its bootstrap draws
other resamples, and it has no Holm correction.
"""

from __future__ import annotations

import math

import numpy as np

TIE_TOLERANCE = 1e-9
BLOCK = 1000  # draws per block: memory is bounded by a block, not by the number of draws
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
    """The generator of the sign flips `paired_tests` draws for `seed`."""
    return _streams(seed)[0]


def paired_tests(baseline, run, *, permutations: int = 10000, bootstrap: int = 2000,
                 seed: int = 0, exact: bool | None = None, block: int = BLOCK) -> list[dict]:
    """The paired tests of `run` against `baseline`, one dict per column (see the module).

    `exact`: `None` enumerates every sign vector when `2 ** n <= permutations`; `True`
    always does (only for small `n`); `False` never does.
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
    """Two-sided paired t-test per column of differences (`scipy.stats.ttest_rel`)."""
    from scipy.special import stdtr  # off the start-up of every stage (params imports compare)

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
    """The columns of `d` as contiguous rows: reduced along a row, a column has the bits it has
    alone (numpy vectorizes a reduction down columns, and its rounding changes with their
    number)."""
    return np.ascontiguousarray(d.T)


def _column_sums(d: np.ndarray) -> np.ndarray:
    return _rows(d).sum(axis=1)


def _observed(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's sum, and the least absolute sum a flip must reach to count."""
    total = _column_sums(d)
    return total, np.abs(total) - TIE_TOLERANCE * _column_sums(np.abs(d))


def _hits(total: np.ndarray, observed: np.ndarray, products) -> np.ndarray:
    """How many flips reach the observed sum: `sum(s * d) = sum(d) - 2 * bits @ d`, with
    `bits @ d` given block after block."""
    hits = np.zeros(len(total), dtype=np.int64)
    for product in products:
        hits += (np.abs(total - 2.0 * product) >= observed).sum(axis=0)
    return hits


def sign_flip_p(diffs, permutations: int, rng: np.random.Generator, *,
                block: int = BLOCK) -> np.ndarray:
    """Monte Carlo two-sided sign-flip p-values, `(b + 1) / (m + 1)`, one per column.

    Each draw is one row of random bits, `ceil(n / 64)` raw 64-bit outputs of the generator
    (little-endian bytes, least significant bit first, the first `n` bits used); a set bit flips
    that query's sign. Draws are whole words, so blocks of any size give the same sequence.
    """
    d = _columns(diffs)
    hits = _hits(*_observed(d), (bits @ d for bits in _flip_bits(d.shape[0], permutations,
                                                                 rng, block)))
    return (hits + 1) / (permutations + 1)


def _flip_bits(n: int, permutations: int, rng: np.random.Generator, block: int):
    """The sign-flip draws of `sign_flip_p`, block after block (`rows x n` of 0/1)."""
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
    """`sign_flip_p` of the columns `values[:, high] - values[:, low]` (one per pair), with
    the same draws: each pair's `bits @ d` is the difference of two columns of
    `bits @ values`, one product over the few runs' columns instead of the many pairs'. The
    sums differ from `sign_flip_p`'s only by rounding, which the tie tolerance absorbs.
    """
    v = _columns(values)
    low, high = np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
    total, observed = _observed(v[:, high] - v[:, low])
    products = (p[:, high] - p[:, low]
                for p in (bits @ v for bits in _flip_bits(v.shape[0], permutations, rng, block)))
    return (_hits(total, observed, products) + 1) / (permutations + 1)


def exact_sign_flip_p(diffs, *, block: int = BLOCK) -> np.ndarray:
    """Exact two-sided sign-flip p-values: all `2 ** n` sign vectors, `p = b / 2 ** n`."""
    d = _columns(diffs)
    n = d.shape[0]
    if n > 24:
        raise ValueError(f"exact enumeration of 2^{n} sign vectors is too large")
    shifts = np.arange(n, dtype=np.int64)
    count = 1 << n
    blocks = (np.arange(start, min(start + block, count), dtype=np.int64)
              for start in range(0, count, block))
    products = (((codes[:, None] >> shifts) & 1).astype(np.float64) @ d for codes in blocks)
    return _hits(*_observed(d), products) / count


def bootstrap_interval(diffs, resamples: int, rng: np.random.Generator, *,
                       block: int = BLOCK, level: float = 0.95) -> np.ndarray:
    """Percentile interval of the mean difference: a `(2, n_pairs)` array (low, high).

    Each resample draws `n` query indices with replacement, `floor(u * n)` for uniform doubles
    `u` (one 64-bit output each, so blocks of any size give the same sequence); per block the
    draws become a `rows x n` matrix of counts, and `counts @ d / n` gives every column's
    resampled means, summed by einsum without BLAS: each mean's terms added in query order, so
    its bits depend on its draw and column only (a BLAS product's rounding depends on the
    shape).
    """
    d = _columns(diffs)
    n = d.shape[0]
    rows_d = _rows(d)
    means = np.empty((resamples, d.shape[1]))
    # floor(u * n) >= 0 is below 2**31: cast to int32 it truncates as to int64, and faster
    index = np.int32 if n < 2 ** 31 else np.int64
    done = 0
    while done < resamples:
        rows = min(block, resamples - done)
        picks = (rng.random((rows, n)) * n).astype(index)
        np.minimum(picks, n - 1, out=picks)
        flat = picks + (np.arange(rows, dtype=np.int64) * n)[:, None]  # int64: rows * n
        counts = np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        means[done:done + rows] = np.einsum("rn,cn->rc", counts, rows_d, optimize=False) / n
        done += rows
    tail = (1.0 - level) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=0)


def adjust(pvalues, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons over the whole family given.

    `holm`: Holm's step-down (controls the family-wise error rate);
    `bh`: Benjamini-Hochberg step-up (controls the false discovery rate);
    `none`: unchanged. Adjusted values are capped at 1 and keep the input order.
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
    """`value` rounded to `digits`; as it is when `digits` is None."""
    return value if digits is None else round(value, digits)


def round_p(value):
    """p-values to 4 significant digits (they come from at most 10^4-10^5 draws)."""
    return None if value is None else float(f"{value:.4g}")


def test_record(s: dict, p_adjusted: float, alpha: float, rounding: int | None) -> dict:
    """One paired test (`s`, from `paired_tests`) as reported: means, delta and
    interval rounded to `rounding` digits, p-values to 4 significant digits, and
    `significant` when the adjusted p-value is at most `alpha`."""
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
