"""SkillRet-shaped benchmark data: TREC qrels and a TREC run, deterministic and vectorized.

Shape (like SkillRet's test split, scaled up):

- query ids ``q-000001``, ``q-000002``, ...; skill ids are UUIDs from a pool of 6,006 skills;
- qrels ``qid 0 skill grade``: 1 to 3 relevant skills per query (50/30/20 %), grade 1 or 2;
- run ``qid Q0 skill rank score tag``: 100 distinct skills per query, ranks 1..100, scores
  descending, printed with 6 decimals (BM25-like magnitudes, about 2 % exact ties with the
  previous result, and more ties once scores are rounded to a C float as trec_eval does);
- each relevant skill sits at a random rank, skewed towards the top, or is missing from the
  run (15 %), so every metric is non-trivial.

Everything is built with numpy/pyarrow over blocks of queries (no per-row Python) and written
as whole buffers: 10M lines take seconds. Files are cached under ``<data-dir>/<key>/`` where the
key holds the scale, the seed and the generator version; a finished set has ``meta.json``.
"""

from __future__ import annotations

import gzip
import json
import os
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

GENERATOR_VERSION = 1
POOL = 6006                     # skills in SkillRet's corpus
DEPTH = 100                     # results per query
N_REL_P = (0.5, 0.3, 0.2)       # P(1, 2, 3 relevant skills)
P_MISSING = 0.15                # a relevant skill is not retrieved at all
P_TIE = 0.02                    # a result has exactly the score of the one above it
BLOCK_QUERIES = 20_000          # queries generated and written per block (2M run lines)
RUN_TAG = "bench"


def dataset_key(name: str, queries: int, seed: int) -> str:
    return f"{name}-{queries}q-seed{seed}-v{GENERATOR_VERSION}"


def ensure_dataset(data_dir: Path, name: str, queries: int, seed: int,
                   gzip_copy: bool = False) -> dict:
    """The dataset's paths and facts, generating (or completing) it when not cached."""
    folder = Path(data_dir) / dataset_key(name, queries, seed)
    meta_path = folder / "meta.json"
    cached = meta_path.exists()
    meta = json.loads(meta_path.read_text()) if cached else _generate(folder, queries, seed)
    if gzip_copy and not (folder / "run.trec.gz").exists():
        meta["gzip_seconds"] = _gzip_copy(folder / "run.trec", folder / "run.trec.gz")
        meta_path.write_text(json.dumps(meta, indent=2))
        cached = False
    return {**meta, "qrels": str(folder / "qrels.txt"), "run": str(folder / "run.trec"),
            "run_gz": str(folder / "run.trec.gz"), "cached": cached}


def _generate(folder: Path, queries: int, seed: int) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    pool_rng = np.random.default_rng([seed, 0])
    skills = skill_pool(pool_rng)
    perm = pool_rng.permutation(POOL)
    steps = coprime_steps(POOL)
    rows = judgments = 0
    qrels_tmp, run_tmp = folder / "qrels.txt.tmp", folder / "run.trec.tmp"
    with open(qrels_tmp, "wb") as qrels_fh, open(run_tmp, "wb") as run_fh:
        for block, first in enumerate(range(0, queries, BLOCK_QUERIES)):
            n = min(BLOCK_QUERIES, queries - first)
            rng = np.random.default_rng([seed, 1, block])
            qids = query_ids(first, n)
            cand = candidates(rng, n, perm, steps)
            qrels_lines, count = qrels_block(rng, qids, cand, skills)
            qrels_fh.write(text_buffer(qrels_lines))
            run_fh.write(text_buffer(run_block(rng, qids, cand, skills)))
            rows += n * DEPTH
            judgments += count
    os.replace(qrels_tmp, folder / "qrels.txt")
    os.replace(run_tmp, folder / "run.trec")
    meta = {"queries": queries, "rows": rows, "judgments": judgments, "seed": seed,
            "skills": POOL, "generator_version": GENERATOR_VERSION,
            "run_bytes": (folder / "run.trec").stat().st_size,
            "generation_seconds": round(time.perf_counter() - start, 2)}
    (folder / "meta.json").write_text(json.dumps(meta, indent=2))
    return meta


def skill_pool(rng: np.random.Generator) -> pa.Array:
    """POOL random version-4 UUID strings (6,006 of them: a tiny loop)."""
    raw = rng.integers(0, 256, size=(POOL, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    return pa.array([str(uuid.UUID(bytes=row.tobytes())) for row in raw], pa.string())


def coprime_steps(n: int) -> np.ndarray:
    values = np.arange(1, n)
    return values[np.gcd(values, n) == 1]


def query_ids(first: int, n: int) -> pa.Array:
    """``q-000001``-style ids for queries first+1 .. first+n."""
    numbers = pc.cast(pa.array(np.arange(first + 1, first + n + 1)), pa.string())
    return pc.binary_join_element_wise("q-", pc.utf8_lpad(numbers, 6, padding="0"), "")


def candidates(rng: np.random.Generator, n: int, perm: np.ndarray,
               steps: np.ndarray) -> np.ndarray:
    """(n, DEPTH + 3) distinct pool indexes per query: the run's 100 skills, then 3 more that
    stand for relevant skills the run missed. An arithmetic progression with a step coprime
    to the pool size never repeats, and ``perm`` scrambles it."""
    start = rng.integers(0, POOL, n)
    step = rng.choice(steps, n)
    offsets = np.arange(DEPTH + 3)
    return perm[(start[:, None] + step[:, None] * offsets) % POOL]


def relevant_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 3) distinct candidate positions: a rank 0..99 skewed to the top, or DEPTH + slot for
    a relevant skill the run does not contain."""
    pos = np.floor(DEPTH * rng.random((n, 3)) ** 2.5).astype(np.int64)
    while True:
        clash = (pos[:, 0] == pos[:, 1]) | (pos[:, 0] == pos[:, 2]) | (pos[:, 1] == pos[:, 2])
        if not clash.any():
            break
        pos[clash] = np.floor(DEPTH * rng.random((int(clash.sum()), 3)) ** 2.5)
    missing = rng.random((n, 3)) < P_MISSING
    return np.where(missing, DEPTH + np.arange(3), pos)


def qrels_block(rng: np.random.Generator, qids: pa.Array, cand: np.ndarray,
                skills: pa.Array) -> tuple[pa.Array, int]:
    """TREC qrels lines ``qid 0 skill grade\\n`` for one block, and their number."""
    n = len(qids)
    n_rel = rng.choice([1, 2, 3], n, p=N_REL_P)
    pos = relevant_positions(rng, n)
    grade = rng.integers(1, 3, (n, 3))
    keep = np.arange(3) < n_rel[:, None]
    query_index = np.broadcast_to(np.arange(n)[:, None], (n, 3))[keep]
    skill_index = np.take_along_axis(cand, pos, axis=1)[keep]
    grades = pc.binary_join_element_wise(pc.cast(pa.array(grade[keep]), pa.string()), "\n", "")
    lines = pc.binary_join_element_wise(qids.take(pa.array(query_index)), "0",
                                        skills.take(pa.array(skill_index)), grades, " ")
    return lines, int(keep.sum())


def run_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, DEPTH) positive scores in millionths, non-increasing per query: a top score of
    12..40 that falls by 50..85 % over the 100 results in random steps, with exact ties at
    rate P_TIE."""
    top = rng.uniform(12.0, 40.0, n)
    gaps = rng.exponential(1.0, (n, DEPTH))
    gaps[:, 0] = 0.0
    gaps[rng.random((n, DEPTH)) < P_TIE] = 0.0
    drop = rng.uniform(0.5, 0.85, n) * top
    fall = np.cumsum(gaps, axis=1)
    scores = top[:, None] - fall * (drop / fall[:, -1])[:, None]
    return np.round(scores * 1e6).astype(np.int64)


def format_micro(micro: np.ndarray) -> pa.Array:
    """Positive integers in millionths as decimal strings with 6 decimals."""
    whole = pc.cast(pa.array(micro // 1_000_000), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(micro % 1_000_000), pa.string()), 6, padding="0")
    return pc.binary_join_element_wise(whole, frac, ".")


def run_block(rng: np.random.Generator, qids: pa.Array, cand: np.ndarray,
              skills: pa.Array) -> pa.Array:
    """TREC run lines ``qid Q0 skill rank score tag\\n`` for one block."""
    n = len(qids)
    ranks = pc.cast(pa.array(np.tile(np.arange(1, DEPTH + 1), n)), pa.string())
    scores = format_micro(run_scores(rng, n).ravel())
    return pc.binary_join_element_wise(
        qids.take(pa.array(np.repeat(np.arange(n), DEPTH))), "Q0",
        skills.take(pa.array(cand[:, :DEPTH].ravel())), ranks, scores, RUN_TAG + "\n", " ")


def text_buffer(lines: pa.Array) -> memoryview:
    """The bytes of a string array whose elements end in newlines: its data buffer, as is."""
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32,
                            count=len(lines) + 1, offset=lines.offset * 4)
    return memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]]


def _gzip_copy(source: Path, target: Path, level: int = 6) -> float:
    """Compress ``source`` into ``target`` (gzip's default level); seconds taken."""
    start = time.perf_counter()
    tmp = target.with_name(target.name + ".tmp")
    with open(source, "rb") as src, gzip.open(tmp, "wb", compresslevel=level) as dst:
        while chunk := src.read(16 << 20):
            dst.write(chunk)
    os.replace(tmp, target)
    return round(time.perf_counter() - start, 2)


def describe(meta: dict) -> str:
    origin = "cached"
    if not meta["cached"]:
        origin = f"generated in {meta['generation_seconds']} s"
        if "gzip_seconds" in meta:
            origin += f", gzip copy in {meta['gzip_seconds']} s"
    return (f"{meta['queries']:,} queries x {DEPTH} = {meta['rows']:,} run rows "
            f"({meta['run_bytes'] / 1e9:.2f} GB), {meta['judgments']:,} judgments; {origin}")


if __name__ == "__main__":  # quick look: python benchmarks/datagen.py [QUERIES]
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        meta = ensure_dataset(Path(tmp), "check", int(sys.argv[1]) if sys.argv[1:] else 1000,
                              seed=1)
        print(describe(meta))
        for key in ("qrels", "run"):
            with open(meta[key]) as fh:
                print(*(next(fh).rstrip() for _ in range(3)), sep="\n")
