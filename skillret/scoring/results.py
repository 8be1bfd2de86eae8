"""Per-query results of a run (:class:`QueryResults`): what the engine produces and aggregation,
validation and the scored run's tables read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from skillret.columnar import arrow
from skillret.scoring.names import Metric


@dataclass
class QueryResults:
    """Per-query values for every query of a run, in run order."""

    queries: pa.Array                        # run order, empty rankings included
    judged_index: np.ndarray                 # position among the judged queries, -1 if none
    retrieved: np.ndarray                    # results in the ranking
    values: dict[Metric, np.ndarray]
    relevant: dict[int, np.ndarray] = field(default_factory=dict)

    @classmethod
    def concat(cls, parts: Sequence["QueryResults"], metrics: Sequence[Metric],
               levels: Iterable[int]) -> "QueryResults":
        if not parts:
            empty = np.zeros(0)
            return cls(arrow.empty(pa.string()), empty.astype(np.int64), empty.astype(np.int64),
                       {m: empty for m in metrics},
                       {lvl: empty.astype(np.int64) for lvl in levels})
        if len(parts) == 1:
            return parts[0]
        return cls(
            pa.concat_arrays([p.queries for p in parts]),
            np.concatenate([p.judged_index for p in parts]),
            np.concatenate([p.retrieved for p in parts]),
            {m: np.concatenate([p.values[m] for p in parts]) for m in metrics},
            {lvl: np.concatenate([p.relevant[lvl] for p in parts]) for lvl in levels},
        )
