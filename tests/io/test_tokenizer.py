"""One tokenizer: the fast (CSV) and general ways of splitting TREC lines are the definition.

The definition, stated here in plain Python (``reference_fields``): lines end at ``\\n``; a NUL
byte or invalid UTF-8 is an error; fields are ``bytes.split()`` (runs of ASCII whitespace); a line
without fields or whose first field starts with ``#`` is skipped; a run line needs at least 6
fields, a qrels line exactly 4; a score is a finite number, a grade an integer in C int range.

Generated files mix regular lines (the fast path's) with odd-but-valid and bad lines anywhere:
at the head, across block edges (the block size is drawn too, down to one byte) and at the end.
Both paths must give the same rows, or the same error (same message, same line), and the rows
and error lines must be the definition's; plain and gzip alike.
"""

from __future__ import annotations

import gzip
import math
from unittest import mock

import pytest
import reference
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillret
from skillret.errors import InputError
from skillret.io import text

# Ids with bytes that are NOT separators: non-ASCII blanks (U+00A0, U+3000, U+2028, U+0085),
# a control character, a '#' inside, non-ASCII letters.
ODD_IDS = ["x\u00a0y", "\u3000", "a\u2028b", "\u0085", "z\x01z", "a#b", "é", "\u00a0"]
PLAIN_IDS = ["q1", "q2", "q10", "d1", "d2", "d3", "A", "B"]
SCORES = ["0.5", "1", "-2.5e3", "3.25", "+1", ".5", "1e5", "-0"]
BAD_SCORES = ["abc", "nan", "inf", "-inf", "1e400", "0x1", "1,5", "--1"]
GRADES = ["0", "1", "2", "-1", "1.0", "3"]
BAD_GRADES = ["1.5", "1e30", "true", "x", "nan", "2147483648"]
SEPARATORS = [" ", "\t", "  ", " \t", "\t\t", "\x0b", "\x0c", "\r "]
BLANKS = ["", " ", "\t", "\r", " \x0c ", "\x0b"]


def reference_fields(data: bytes, want: int, exact: bool, number: int, what: str):
    """(rows, extra lines) or ("error", line): the definition, line by line."""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    rows, extra = [], 0
    for n, raw in enumerate(lines, 1):
        if b"\x00" in raw:
            return "error", n
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return "error", n
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if len(parts) < want or (exact and len(parts) > want):
            return "error", n
        token = parts[number].decode()
        try:
            value = float(token)
        except ValueError:
            return "error", n
        if what == "score" and not math.isfinite(value):
            return "error", n
        if what == "grade" and not (math.isfinite(value) and value == int(value)
                                    and -2 ** 31 <= value < 2 ** 31):
            return "error", n
        extra += len(parts) > want
        rows.append((n, parts[0].decode(), parts[2].decode(), value))
    if not rows and what == "score":
        return "error", None  # a run without a result
    return rows, extra


@st.composite
def trec_lines(draw, kind_of_file: str):
    """Lines of a run or qrels file, mostly regular, with odd and bad lines anywhere."""
    delimiter = draw(st.sampled_from([" ", "\t"]))
    n = draw(st.integers(0, 40))
    lines = []
    for _ in range(n):
        kind = draw(st.sampled_from(["regular"] * 10 + ["odd", "blank", "comment", "bad"]))
        qid = draw(st.sampled_from(PLAIN_IDS[:3]))
        sid = draw(st.sampled_from(PLAIN_IDS[3:]))
        if kind_of_file == "run":
            fields = [qid, "Q0", sid, str(draw(st.integers(1, 9))), draw(st.sampled_from(SCORES)),
                      "tag"]
        else:
            fields = [qid, "0", sid, draw(st.sampled_from(GRADES))]
        if kind == "regular":
            lines.append(delimiter.join(fields).encode())
        elif kind == "odd":
            if draw(st.booleans()):
                fields[draw(st.sampled_from([0, 2]))] = draw(st.sampled_from(ODD_IDS))
            if kind_of_file == "run" and draw(st.booleans()):
                fields.append("extra")
            line = fields[0]
            for f in fields[1:]:
                line += draw(st.sampled_from(SEPARATORS)) + f
            line = draw(st.sampled_from(["", " ", "\t"])) + line + \
                draw(st.sampled_from(["", " ", "\r", "\t"]))
            lines.append(line.encode())
        elif kind == "blank":
            lines.append(draw(st.sampled_from(BLANKS)).encode())
        elif kind == "comment":
            lines.append(draw(st.sampled_from(["#", "# a b c", "#q Q0 d 1 1 t", " # x"]))
                         .encode())
        else:
            how = draw(st.sampled_from(["short", "long", "nul", "utf8", "number", "empty"]))
            if how == "short":
                del fields[draw(st.integers(0, len(fields) - 1))]
            elif how == "long" and kind_of_file == "qrels":
                fields.append("x")
            elif how == "number":
                fields[-2 if kind_of_file == "run" else -1] = draw(
                    st.sampled_from(BAD_SCORES if kind_of_file == "run" else BAD_GRADES))
            elif how == "empty":  # a doubled blank where a field is missing
                fields[draw(st.integers(0, len(fields) - 1))] = ""
            line = delimiter.join(fields).encode()
            if how == "nul":
                at = draw(st.integers(0, len(line)))
                line = line[:at] + b"\x00" + line[at:]
            elif how == "utf8":
                at = draw(st.integers(0, len(line)))
                line = line[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x80"])) + \
                    line[at:]
            lines.append(line)
    return lines


def _outcome(collect):
    try:
        return collect()
    except InputError as exc:
        return ("error", exc.line, str(exc))


def _run_rows(path, block_size):
    rows, extra = [], 0
    for batch in text.run_batches(path, block_size=block_size, with_rank=True):
        extra += batch.extra_fields
        rows += list(zip(batch.line.tolist(), batch.query_id.to_pylist(),
                         batch.skill_id.to_pylist(), batch.score.tolist()))
    return rows, extra


def _qrels_rows(path, block_size):
    rows = []
    for fields in text.read_fields(path, text.QRELS_LAYOUT, block_size=block_size):
        rows += list(zip(fields.line.tolist(), fields.columns[0].to_pylist(),
                         fields.columns[2].to_pylist(), fields.columns[3].tolist()))
    return rows, 0


def _write(tmp_path_factory, lines, final_newline, gz, name):
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    path = tmp_path_factory.mktemp("tok") / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return data, path


FILES = {"run": (_run_rows, 6, False, 4, "score"), "qrels": (_qrels_rows, 4, True, 3, "grade")}


@pytest.mark.parametrize("kind", ["run", "qrels"])
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), block_size=st.one_of(st.integers(1, 300), st.just(text.BLOCK_SIZE)),
       final_newline=st.booleans(), gz=st.booleans())
def test_fast_and_general_paths_are_the_definition(tmp_path_factory, kind, data, block_size,
                                                   final_newline, gz):
    lines = data.draw(trec_lines(kind))
    rows_of, want, exact, number, what = FILES[kind]
    raw, path = _write(tmp_path_factory, lines, final_newline, gz, f"{kind}.txt")
    fast = _outcome(lambda: rows_of(path, block_size))  # blocks split by parser threads
    with mock.patch.object(text, "fast_fields", lambda *_: None), \
            mock.patch.object(text, "PARSERS", 1):  # the general way, one block at a time
        general = _outcome(lambda: rows_of(path, block_size))
    assert fast == general
    expected = reference_fields(raw, want, exact, number, what)
    if expected[0] == "error":
        assert fast[0] == "error" and fast[1] == expected[1], (fast, expected)
    else:
        assert fast == expected
    # The block size never changes the outcome.
    assert _outcome(lambda: rows_of(path, text.BLOCK_SIZE)) == fast


def test_regular_blocks_take_the_fast_path():
    """The fast path is not dead code: regular blocks are parsed by it (and odd ones are not)."""
    layout = text.RUN_LAYOUT
    assert text.fast_fields(1, b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\n", layout) is not None
    assert text.fast_fields(1, b"q1\tQ0\td1\t1\t0.5\tt\n", layout) is not None
    for odd in (b"q1  Q0 d1 1 0.5 t\n", b" q1 Q0 d1 1 0.5 t\n", b"q1 Q0 d1 1 0.5 t \n",
                b"q1 Q0 d1 1 0.5 t\r\n", b"q1 Q0 d1 1 0.5 t\n\n", b"# c\n", b"q\x00 Q0\n",
                b"q1\tQ0 d1 1 0.5 t\n", b"q\xff Q0 d 1 1 t\n", b"q1 Q0  1 0.5 t\n",
                b"q1 Q0 d1 1 nan t\n", b"q1 Q0 d1 1 0.5 t x\n", b"q1 Q0 d1 x\xa0 0.5 t\n\n"):
        assert text.fast_fields(1, odd, layout) is None, odd


def test_a_line_longer_than_the_limit_is_one_error(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(b"q1 Q0 d1 1 0.5 t\n" + b"x" * 5000 + b"\n")
    with pytest.raises(InputError, match=r"run.trec:2: has a line longer than 1,000 bytes"), \
            mock.patch.object(text, "MAX_LINE", 1000):
        list(text.read_fields(path, text.RUN_LAYOUT, block_size=64))
    # A line longer than a block but within the limit is read whole.
    assert b"".join(b for b, _ in text.blocks(path, 64)) == path.read_bytes()


def test_odd_ids_score_as_pytrec_eval(tmp_path):
    """Ids holding U+00A0, U+3000, U+2028, U+0085 are single fields: scores equal pytrec_eval's on
    the runs and qrels split by the definition."""
    qrels_lines, run_lines = [], []
    queries = ["q\u00a01", "q\u30002", "q3", "q\u20284", "q\u00855"]
    skills = ["s\u00a0a", "s b".replace(" ", "\u3000"), "s\u2028c", "s\u0085d", "plain", "e"]
    for i, q in enumerate(queries):
        for j, s in enumerate(skills):
            if (i + j) % 3 == 0:
                qrels_lines.append(f"{q} 0 {s} {1 + (i + j) % 2}")
            run_lines.append(f"{q} Q0 {s} {j + 1} {round(1 - 0.13 * ((i * 7 + j * 5) % 6), 2)} r")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    (tmp_path / "run.trec").write_text("\n".join(run_lines) + "\n", encoding="utf-8")
    run_rows, _ = reference_fields((tmp_path / "run.trec").read_bytes(), 6, False, 4, "score")
    qrels_rows, _ = reference_fields((tmp_path / "qrels.txt").read_bytes(), 4, True, 3, "grade")
    run, qrels = {}, {}
    for _, q, s, score in run_rows:
        run.setdefault(q, {})[s] = score
    for _, q, s, grade in qrels_rows:
        qrels.setdefault(q, {})[s] = int(grade)
    assert len(run) == len(queries) and all(len(r) == len(skills) for r in run.values())
    ours = skillret.evaluate(tmp_path / "qrels.txt", tmp_path / "run.trec", "official")
    assert ours == reference.official_trec_eval(qrels, run)
    assert ours["NDCG@10"] > 0
