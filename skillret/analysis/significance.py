"""Paired significance tests over per-query values `(n_queries,)` or `(n_queries, n_pairs)`.

Per column (one (run, metric) pair), `paired_tests` gives:
- `baseline`, `run` (means, `math.fsum`), `delta = run - baseline`;
- `ci95`: bootstrap percentile interval of the mean difference (None when `bootstrap` is 0);
- `t`, `p_t`: two-sided paired t-test as `scipy.stats.ttest_rel`, except: all differences 0,
  `t = 0, p_t = 1`; equal nonzero ones, `t` infinite (their sign), `p_t = 0`; one query, None;
- `p_randomization`: two-sided sign-flip test, `p = (b + 1) / (m + 1)` where `b` of `m` random
  sign vectors reach `|sum(d)|` within `TIE_TOLERANCE * sum(|d|)`; exact (`b / 2 ** n` over all
  vectors) when `2 ** n <= permutations`;
- `wins`, `ties` (bitwise equal), `losses`.

Draws: `PCG64` from `SeedSequence(seed)`, one child for flips, one for the bootstrap, so the
numbers do not depend on column count, block size or BLAS threads; each column sums its own
contiguous copy (`ascontiguousarray(d.T)`: a reduction down columns rounds differently with
their count), so its bits are the same alone or among others. Correction (`adjust`) is
separate so stratified callers adjust once. Not scipy.stats: slow import, column-dependent
rounding, other bootstrap resamples, no Holm.
"""

from __future__ import annotations

import math

import numpy as np

TIE_TOLERANCE = 1e-9
BLOCK = 1000  # draws per block: memory is bounded by a block, not by the number of draws
CORRECTIONS = ("holm", "bh", "none")


def _columns(values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array[:, None] if array.ndim == 1 else array


def paired_tests(baseline, run, *, permutations: int = 10000, bootstrap: int = 2000,
                 seed: int = 0) -> list[dict]:
    """One dict per column (see the module) of same-shaped values over at least one query
    (`compare.check_settings` checks the counts); exact iff `2 ** n <= permutations`."""
    base, other = _columns(baseline), _columns(run)
    n = base.shape[0]
    diffs = other - base
    flips, resamples = (np.random.Generator(np.random.PCG64(child))
                        for child in np.random.SeedSequence(int(seed)).spawn(2))
    use_exact = 2 ** n <= permutations
    p_randomization = sign_flip_p(diffs, permutations, flips, exact=use_exact)
    t, p_t = t_test(diffs)
    interval = bootstrap_interval(diffs, bootstrap, resamples) if bootstrap else None
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
            "p_randomization": float(p_randomization[j]),
            "randomization": "exact" if use_exact else "monte-carlo",
            "wins": int(wins[j]),
            "ties": int(n - wins[j] - losses[j]),
            "losses": int(losses[j]),
        })
    return out


def t_test(d: np.ndarray) -> tuple[list[float | None], list[float | None]]:
    """Two-sided paired t-test per column of differences `(n_queries, n_pairs)` (the module
    says why not scipy.stats' own)."""
    from scipy.special import stdtr  # off the start-up of every stage (params imports compare)

    n = d.shape[0]
    nonzero = d.any(axis=0)
    if n < 2:
        return [None if z else 0.0 for z in nonzero], [None if z else 1.0 for z in nonzero]
    rows = np.ascontiguousarray(d.T)
    mean, var = rows.mean(axis=1), rows.var(axis=1, ddof=1)
    tested = nonzero & ~(d == d[:1]).all(axis=0) & (var != 0.0)
    t = np.zeros(d.shape[1])
    t[tested] = mean[tested] / np.sqrt(var[tested] / n)
    p = np.minimum(1.0, 2.0 * stdtr(n - 1, -np.abs(t)))
    constant = nonzero & ~tested
    t[constant] = np.copysign(np.inf, mean[constant])
    p[constant] = 0.0
    p[~nonzero] = 1.0
    return t.tolist(), p.tolist()


def sign_flip_p(d: np.ndarray, permutations: int, rng: np.random.Generator, *,
                exact: bool = False) -> np.ndarray:
    """Sign-flip p-values per column of differences `(n_queries, n_pairs)` (the module's
    formulas); `exact`: over all `2 ** n` sign vectors.

    A random draw is `ceil(n / 64)` raw 64-bit words, little-endian, first `n` bits; a set bit
    flips a query's sign. Whole words, so any block size gives the same sequence. A flip's sum
    is `sum(s * d) = sum(d) - 2 * bits @ d`.
    """
    n = d.shape[0]
    if exact and n > 24:
        raise ValueError(f"exact enumeration of 2^{n} sign vectors is too large")
    total = np.ascontiguousarray(d.T).sum(axis=1)
    observed = np.abs(total) - TIE_TOLERANCE * np.ascontiguousarray(np.abs(d).T).sum(axis=1)
    count, words, shifts = 1 << n if exact else permutations, (n + 63) // 64, np.arange(n)
    hits = np.zeros(len(total), dtype=np.int64)
    for done in range(0, count, BLOCK):
        rows = min(BLOCK, count - done)
        if exact:
            bits = (np.arange(done, done + rows, dtype=np.int64)[:, None] >> shifts) & 1
        else:
            raw = rng.bit_generator.random_raw(rows * words).astype("<u8", copy=False)
            raw = raw.view(np.uint8).reshape(rows, words * 8)
            bits = np.unpackbits(raw, axis=1, count=n, bitorder="little")
        hits += (np.abs(total - 2.0 * (bits.astype(np.float64) @ d)) >= observed).sum(axis=0)
    return hits / count if exact else (hits + 1) / (permutations + 1)


def bootstrap_interval(d: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap 95% percentile interval of the mean difference per column of `d`
    `(n_queries, n_pairs)`: `(2, n_pairs)` (low, high).

    A resample is `n` indices `floor(u * n)` with replacement; means are `counts @ d / n` by
    einsum without BLAS, so each mean's bits depend on its draw and column only, not the shape.
    """
    n = d.shape[0]
    rows_d = np.ascontiguousarray(d.T)
    means = np.empty((resamples, d.shape[1]))
    for done in range(0, resamples, BLOCK):
        rows = min(BLOCK, resamples - done)
        picks = (rng.random((rows, n)) * n).astype(np.int64)
        np.minimum(picks, n - 1, out=picks)
        flat = picks + (np.arange(rows, dtype=np.int64) * n)[:, None]
        counts = np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        means[done:done + rows] = np.einsum("rn,cn->rc", counts, rows_d, optimize=False) / n
    tail = (1.0 - 0.95) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=0)


def adjust(pvalues, method: str = "holm") -> np.ndarray:
    """p-values adjusted over the family: `holm` step-down (FWER), `bh` Benjamini-Hochberg
    step-up (FDR), `none` (`CORRECTIONS`); capped at 1, input order kept."""
    p = np.asarray(pvalues, dtype=np.float64)
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

def rounded(value, digits: int | None):
    return value if digits is None else round(value, digits)


def round_p(value):
    """p-values to 4 significant digits (they come from at most 10^4-10^5 draws)."""
    return None if value is None else float(f"{value:.4g}")


def test_records(stats: list[dict], correction: str, alpha: float,
                 rounding: int | None) -> list[dict]:
    """`paired_tests`' dicts as reported, their randomization p-values adjusted as one family;
    `significant` when the adjusted p <= `alpha`."""
    adjusted = adjust([s["p_randomization"] for s in stats], correction)
    return [{
        "baseline": rounded(s["baseline"], rounding),
        "run": rounded(s["run"], rounding),
        "delta": rounded(s["delta"], rounding),
        "ci95": None if s["ci95"] is None else [rounded(v, rounding) for v in s["ci95"]],
        "t": None if s["t"] is None or math.isinf(s["t"]) else round(s["t"], 4),
        "p_t": round_p(s["p_t"]),
        "p_randomization": round_p(s["p_randomization"]),
        "p_adjusted": round_p(float(p)),
        "significant": bool(p <= alpha),
        "wins": s["wins"],
        "ties": s["ties"],
        "losses": s["losses"],
    } for s, p in zip(stats, adjusted)]
