"""Fuzz target: JSON documents: pytrec_eval's ``{query: {skill: value}}`` (runs and qrels) and
SkillRet's results JSON (``{"metrics": ..., "retrieval": {split: ...}}``).

Input: one selector byte, then the file's content. The selector picks run or qrels, the file
name, the format (detected, ``json`` or ``skillret-json`` forced), the split, the depth limit,
and how a run is consumed.
"""

import atheris

with atheris.instrument_imports():
    import _harness

RUN = [("run.json", None), ("run.json", "json"), ("run.json", "skillret-json"),
       ("run.dat", "skillret-json"), ("run", None), ("run.res", "json")]
QRELS = [("qrels.json", None), ("qrels.json", "json"), ("qrels", None), ("qrels.dat", "json")]
SPLITS = [None, "test", "dev", "train"]
DEPTHS = [None, 3, 64]
HOW = ["read", "chunks", "evaluate"]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    from skillret import limits

    s, content = data[0], data[1:]
    depth = DEPTHS[(s >> 6) % 3]
    if s & 1:
        name, fmt = QRELS[(s >> 1) % 4]
        path = _harness.write(name, content)
        work = lambda: _harness.read_qrels(path, evaluate=bool(s & 8), fmt=fmt)  # noqa: E731
    else:
        name, fmt = RUN[(s >> 1) % 6]
        path = _harness.write(name, content)
        how = HOW[(s >> 4) % 3]
        split = SPLITS[(s >> 2) % 4]
        work = lambda: _harness.read_run(path, how=how, fmt=fmt, split=split)  # noqa: E731
    with limits.applied(json_depth=depth):
        _harness.library(work)


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
