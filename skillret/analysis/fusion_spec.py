"""How to fuse, as `params.yaml` and the `fuse` command say it: the method and its settings,
checked on construction (`Fusion`). No numpy or Arrow here: the pipeline's
`fuse_inputs@<name>` stage reads the `fuse` section without the fusion's machinery
(`skillret.analysis.fusion_methods`, which computes it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from skillret.errors import ConfigError

METHODS = ("rrf", "combsum", "combmnz")
NORMS = ("minmax", "zscore", "none")
DEFAULT_K = 60
DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class Fusion:
    """How to fuse: the method and its settings, checked on construction."""

    method: str = "rrf"
    k: float = DEFAULT_K
    norm: str | None = None
    weights: Mapping[str, float] = field(default_factory=dict)
    depth: int = DEFAULT_DEPTH

    def __post_init__(self):
        if self.method not in METHODS:
            raise ConfigError(f"unknown fusion method {self.method!r} "
                              f"(methods: {', '.join(METHODS)})")
        if self.method == "rrf":
            if self.norm is not None:
                raise ConfigError("rrf fuses ranks, not scores: it takes no norm")
        elif self.norm is None:
            object.__setattr__(self, "norm", "minmax")
        elif self.norm not in NORMS:
            raise ConfigError(f"unknown norm {self.norm!r} (norms: {', '.join(NORMS)})")
        if not _number(self.k) or not self.k > 0:
            raise ConfigError(f"k must be a number > 0, not {self.k!r}")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise ConfigError(f"depth must be an integer >= 1, not {self.depth!r}")
        for name, weight in dict(self.weights).items():
            if not _number(weight):
                raise ConfigError(f"the weight of {name!r} must be a finite number, "
                                  f"not {weight!r}")

    def check_weights(self, names: list[str]) -> None:
        """Refuse a weight for a run that is not among `names`, the runs fused."""
        unknown = sorted(set(self.weights) - set(names))
        if unknown:
            raise ConfigError(f"a weight for {', '.join(map(repr, unknown))}, which is not "
                              f"among the runs fused ({', '.join(names)})")

    def weight_vector(self, names: list[str]):
        """The weights of `names`, in order, as a float64 array (1 for a run not named)."""
        import numpy as np

        self.check_weights(names)
        return np.array([float(self.weights.get(n, 1.0)) for n in names], dtype=np.float64)

    def describe(self, names: list[str]) -> str:
        """The fusion in a summary line: `rrf (k=60, depth 100) of bm25 (w=2), dense`; a
        run's weight is shown when it is not 1."""
        what = f"k={self.k:g}" if self.method == "rrf" else f"norm={self.norm}"
        runs = [name if float(self.weights.get(name, 1.0)) == 1.0
                else f"{name} (w={float(self.weights[name]):g})" for name in names]
        return f"{self.method} ({what}, depth {self.depth}) of {', '.join(runs)}"


def _number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


__all__ = ["Fusion", "METHODS", "NORMS", "DEFAULT_K", "DEFAULT_DEPTH"]
