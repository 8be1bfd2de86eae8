"""ranx's fusion, as its documentation shows: ``Run.from_file`` (TREC) for each run, ``fuse``,
then ``Run.save`` (TREC).

    python benchmarks/ranx_fuse.py METHOD NORM OUTPUT.trec RUN RUN [RUN ...]

METHOD and NORM are skillret's names (rrf / combsum / combmnz; minmax / zscore / none), mapped
to ranx's (rrf / sum / mnz; min-max / zmuv / None). ranx requires every run to hold the same
queries.
"""

from __future__ import annotations

import sys

from ranx import Run, fuse

METHODS = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz"}
NORMS = {"minmax": "min-max", "zscore": "zmuv", "none": None}


def main(argv: list[str]) -> int:
    method, norm, output, *paths = argv
    runs = [Run.from_file(path, kind="trec") for path in paths]
    fused = fuse(runs, norm=None if method == "rrf" else NORMS[norm], method=METHODS[method],
                 params={"k": 60} if method == "rrf" else None)
    fused.save(output, kind="trec")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
