"""Paired tests remembered by the content of what they test, so that a stage testing every run
again after one run changed computes only that run's tests.

A column's tests (:func:`~skillret.analysis.significance.paired_tests`) depend on its two
per-query vectors and the settings alone: the sign flips and the resamples are drawn from the
seed and the number of queries, the same for every column, whatever the other columns or the
block (``test_same_seed_same_numbers_whatever_the_block_or_columns``). So a column's result is
kept under the sha256 of what it depends on:

- the memo's version: the bytes of ``significance.py`` (the tests' code) and the versions of
  numpy (the draws) and scipy (the t distribution), so that new code never reads old results;
- the settings (permutations, bootstrap, seed), the number of queries;
- both vectors' float64 bytes, in query order.

A hit gives exactly what the computation gives (``tests/analysis/test_memo.py`` checks the
compare stage's outputs with and without a memo, after a run changed). The family-wide
correction (:func:`~skillret.analysis.significance.adjust`) is never remembered: callers
adjust over the whole family, as always.

The memo also keeps texts under keys its caller makes (:meth:`PairedTestMemo.text`): the
compare stage's query reports, under the sha256 of everything a report is made from
(:func:`skillret.pipeline.query_reports.report_keys`).

The file (JSON) holds the version and the entries the last stage used, keys sorted: its content
is a function of the stage's inputs, never of their history. A file that cannot be read, or of
another version, is an empty memo: everything is computed again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from skillret.analysis import significance

FORMAT = "skillret paired-test memo 1"


def version() -> str:
    """What the remembered results were computed with (see the module)."""
    import scipy

    code = hashlib.sha256(Path(significance.__file__).read_bytes()).hexdigest()
    return f"{FORMAT}; significance.py sha256 {code}; numpy {np.__version__}; " \
           f"scipy {scipy.__version__}"


class PairedTestMemo:
    """:meth:`paired_tests` as :func:`significance.paired_tests`, computing only the columns it
    has not seen; :meth:`save` keeps the columns used since :meth:`load`."""

    def __init__(self, entries: dict[str, dict] | None = None):
        self._version = version()
        self._known = dict(entries or {})
        self._used: dict[str, dict] = {}
        self._texts: dict[str, str] = {}
        self._texts_used: dict[str, str] = {}
        self.hits = 0
        self.computed = 0

    @classmethod
    def load(cls, path: str | os.PathLike) -> PairedTestMemo:
        memo = cls()
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return memo
        if isinstance(data, dict) and data.get("version") == memo._version \
                and isinstance(data.get("tests"), dict):
            memo._known = {key: _decoded(stats) for key, stats in data["tests"].items()
                           if isinstance(stats, dict)}
            texts = data.get("texts")
            if isinstance(texts, dict):
                memo._texts = {key: text for key, text in texts.items()
                               if isinstance(text, str)}
        return memo

    def text(self, key: str) -> str | None:
        """The text kept under ``key`` (None: not known); a text read is kept by :meth:`save`."""
        text = self._texts.get(key)
        if text is not None:
            self._texts_used[key] = text
        return text

    def keep_text(self, key: str, text: str) -> None:
        """Remember ``text`` under ``key``: the caller's key covers all it depends on."""
        self._texts[key] = self._texts_used[key] = text

    def paired_tests(self, baseline, run, *, permutations: int = 10000, bootstrap: int = 2000,
                     seed: int = 0) -> list[dict]:
        base = significance._columns(baseline)
        other = significance._columns(run)
        if base.shape != other.shape:         # the computation's own error
            return significance.paired_tests(base, other, permutations=permutations,
                                             bootstrap=bootstrap, seed=seed)
        settings = f"{self._version}; permutations {int(permutations)}; " \
                   f"bootstrap {int(bootstrap)}; seed {int(seed)}; queries {base.shape[0]}"
        keys = [_key(settings, base[:, j], other[:, j]) for j in range(base.shape[1])]
        missing = [j for j, key in enumerate(keys) if key not in self._known]
        distinct = list({keys[j]: j for j in missing}.values())   # one column per new key
        if distinct:
            fresh = significance.paired_tests(base[:, distinct], other[:, distinct],
                                              permutations=permutations, bootstrap=bootstrap,
                                              seed=seed)
            for j, stats in zip(distinct, fresh):
                self._known[keys[j]] = stats
        self.computed += len(distinct)
        self.hits += len(keys) - len(missing)
        out = []
        for key in keys:
            self._used[key] = self._known[key]
            out.append(dict(self._known[key]))
        return out

    def save(self, path: str | os.PathLike) -> None:
        """The entries used since this memo was loaded, keys sorted (atomic write)."""
        from skillret.io.atomic import write_text

        tests = {key: _encoded(self._used[key]) for key in sorted(self._used)}
        data = {"version": self._version, "tests": tests}
        if self._texts_used:
            data["texts"] = {key: self._texts_used[key] for key in sorted(self._texts_used)}
        write_text(path, json.dumps(data, separators=(",", ":")) + "\n")


def _key(settings: str, base: np.ndarray, run: np.ndarray) -> str:
    digest = hashlib.sha256(settings.encode())
    digest.update(np.ascontiguousarray(base, dtype="<f8").tobytes())
    digest.update(b"|")
    digest.update(np.ascontiguousarray(run, dtype="<f8").tobytes())
    return digest.hexdigest()


def _encoded(stats: dict) -> dict:
    """JSON-ready: floats as ``float.hex`` strings (exact, and infinities too), ci95 a list."""
    def one(value):
        if isinstance(value, float):
            return {"f": value.hex()}
        if isinstance(value, tuple):
            return [one(v) for v in value]
        return value
    return {name: one(value) for name, value in stats.items()}


def _decoded(stats: dict) -> dict:
    def one(value):
        if isinstance(value, dict) and set(value) == {"f"}:
            return float.fromhex(value["f"])
        if isinstance(value, list):
            return tuple(one(v) for v in value)
        return value
    return {name: one(value) for name, value in stats.items()}


__all__ = ["PairedTestMemo", "version"]
