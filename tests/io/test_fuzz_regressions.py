"""What fuzzing the readers found (``fuzz/``, issue #21 item 8), as a user meets it: a file with
that content, read through the public API or the CLI, gives a one-line error naming the file
(exit status 2 in the CLI), never a traceback."""

from __future__ import annotations

import re

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import skillret
from skillret import cli
from skillret.errors import InputError


def _read(kind: str, path, fmt=None):
    if kind == "qrels":
        return skillret.read_qrels(path, fmt=fmt)
    return skillret.open_run(path, fmt=fmt).read()


# Found by fuzz_csv (the first input it reported): a header that is not UTF-8 passed the
# parser (it checks values only) and failed when the column names were decoded.
@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("name, fmt, content", [
    ("x.txt", "tsv", b"\xff\xff<n)o,rel\x8aq12,2\nq2,s3,1\nq3,s1,0\n"),  # the input, as found
    ("x.dat", "csv", b"\xffquery_id,skill_id,relevance\nq1,s1,1\n"),
    ("x.csv", None, b"query_id,skill_id,score\xff\n"),  # in the sniffer's last 4 bytes
])
def test_csv_header_not_utf8(tmp_path, kind, name, fmt, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=r":1: is not UTF-8 text"):
        _read(kind, path, fmt)


# The same hole in JSON lines (found by reading the code while fixing the one above): a field
# name that is not UTF-8.
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_jsonl_field_name_not_utf8(tmp_path, kind):
    path = tmp_path / "rows.dat"
    path.write_bytes(b'{"query_id": "q1", "skill_id\xff": "s1", "score": 1}\n')
    with pytest.raises(InputError, match=r":1: is not UTF-8 text"):
        _read(kind, path, "jsonl")


# A lone CR ends the header line (as the parser reads it); the csv module used to find the
# header refused it (csv.Error: new-line character seen in unquoted field).
@pytest.mark.parametrize("content", [b"query_id,skill_id,score\rq1,s1,1.5\r",
                                     b"query_id,skill_id,score\rq1,s1,1.5\n"])
def test_csv_lone_cr_line_ends(tmp_path, content):
    path = tmp_path / "run.csv"
    path.write_bytes(content)
    run = skillret.open_run(path).read()
    assert len(run) == 1


# Found while fixing the above: locating the line of a wrong column count re-reads the file with
# the csv module, whose fields are capped at 128 KiB (csv.Error beyond).
def test_csv_wrong_column_count_after_a_long_field(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"query_id,skill_id,score\nq1," + b"s" * 200_000 + b",1\nq1,s2,1,9\n")
    with pytest.raises(InputError, match="wrong column count: expected 3, found 4"):
        skillret.open_run(path).read()


# The line of a wrong column count is pyarrow's row number (parsed again on one thread) as a
# line: a blank first line once made the re-read guess the delimiter from it (no line, or a
# wrong one).
def test_csv_wrong_column_count_line_after_a_blank_first_line(tmp_path):
    path = tmp_path / "run.tsv"
    path.write_bytes(b"\r\nquery_id\tskill_id\tscore\n\"a,b\"\ts1\n")
    with pytest.raises(InputError, match="expected 3, found 2") as err:
        skillret.open_run(path).read()
    assert err.value.line == 3


def test_cli_one_line_for_a_header_not_utf8(tmp_path, capsys):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.csv"
    qrels.write_bytes(b"q1 0 s1 1\n")
    run.write_bytes(b"query\xff_id,skill_id,score\nq1,s1,1\n")
    status = cli.main(["score", "--qrels", str(qrels), "--run", str(run), "--format", "csv"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{run}:1: is not UTF-8 text" in err


# Found by fuzz_csv: a column the reader uses appears twice in the header (pyarrow's KeyError
# "Field ... exists 2 times in schema"). Parquet files can hold the same names.
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_csv_column_named_twice(tmp_path, kind):
    path = tmp_path / "x.csv"
    path.write_bytes(b"query_id,skill_id,skill_id,score\nq1,s1,s2,1\n")
    with pytest.raises(InputError, match="has 2 columns named 'skill_id'"):
        _read(kind, path)


def test_csv_unused_column_named_twice_is_fine(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"query_id,skill_id,score,x,x\nq1,s1,1,2,3\n")
    assert len(skillret.open_run(path).read()) == 1


@pytest.mark.parametrize("how", ["read", "chunks", "qrels"])
def test_parquet_column_named_twice(tmp_path, how):
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path / "x.parquet"
    table = pa.Table.from_arrays([pa.array(["q1"]), pa.array(["s1"]), pa.array(["s2"]),
                                  pa.array([1])], names=["query_id", "skill_id", "skill_id",
                                                         "score"])
    pq.write_table(table, path)
    with pytest.raises(InputError, match="has 2 columns named 'skill_id'"):
        if how == "qrels":
            skillret.read_qrels(path)
        elif how == "read":
            skillret.open_run(path).read()
        else:
            list(skillret.open_run(path).chunks())


# Found while widening fuzz_gzip's damage (by reading the sniffer): a gzip file whose deflate
# stream is corrupt raised zlib.error from format detection, for every format.
@pytest.mark.parametrize("name", ["run.trec.gz", "run.json.gz", "run.jsonl.gz", "run.csv.gz"])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_gzip_corrupt_deflate_stream(tmp_path, name, kind):
    import gzip
    good = gzip.compress(b"q1 Q0 s1 1 1.0 t\n" * 50, mtime=0)
    path = tmp_path / name
    path.write_bytes(good[:10] + b"\xff" * 5 + good[15:])
    with pytest.raises(InputError, match="cannot be read .*invalid block type"):
        _read(kind, path)


def test_cli_gzip_corrupt_deflate_stream(tmp_path, capsys):
    import gzip
    qrels, run = tmp_path / "q.txt", tmp_path / "r.trec.gz"
    qrels.write_bytes(b"q1 0 s1 1\n")
    good = gzip.compress(b"q1 Q0 s1 1 1.0 t\n" * 50, mtime=0)
    run.write_bytes(good[:10] + b"\xff" * 5 + good[15:])
    status = cli.main(["validate", "--qrels", str(qrels), "--run", str(run)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"skillret-eval: error: {run}: cannot be read")


# The input fuzz_trec_qrels reported (after 19,059 inputs): gzip's magic number, then bytes that
# are not a deflate stream, in a file named .qrels (zlib.error from format detection).
def test_trec_qrels_found_input(tmp_path):
    path = tmp_path / "qrels.qrels"
    path.write_bytes(b"\x1f\x8b\x08\x0a\x0aPAR1qq0\t0\ts1\t1\n\nq" + b"\x00" * 20 + b"2 01\n")
    with pytest.raises(InputError, match="cannot be read .*invalid stored block lengths"):
        skillret.read_qrels(path)


# Found by reading the JSON reader while fuzz_json ran: an integer too long for Python's int
# conversion (over 4,300 digits: ValueError from json.loads, and an AttributeError where JSON
# lines read exc.msg), or too large for a double (OverflowError).
HUGE = b"1" + b"0" * 5000
LARGE = b"1" + b"0" * 400


@pytest.mark.parametrize("number", [HUGE, LARGE])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_json_integer_too_large(tmp_path, kind, number):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"q1": {"s1": ' + number + b"}}")
    with pytest.raises(InputError, match="Exceeds the limit|too large to be stored in a double"):
        _read(kind, path)


def test_results_json_integer_too_long(tmp_path):
    path = tmp_path / "results.json"
    path.write_bytes(b'{"retrieval": {"test": {"q1": {"s1": ' + HUGE + b"}}}}")
    with pytest.raises(InputError, match="malformed JSON"):
        skillret.open_run(path).read()


def test_results_json_metric_too_large_is_ignored(tmp_path):
    path = tmp_path / "results.json"
    path.write_bytes(b'{"metrics": {"test": {"NDCG@5": ' + LARGE + b'}}, '
                     b'"retrieval": {"test": {"q1": {"s1": 1.5}}}}')
    run = skillret.open_run(path).read()
    assert len(run) == 1


@pytest.mark.parametrize("number", [HUGE, LARGE])
def test_queries_jsonl_grade_too_large(tmp_path, number):
    path = tmp_path / "queries.jsonl"
    path.write_bytes(b'{"id": "q1", "labels": [{"id": "s1", "relevance": ' + number + b"}]}\n")
    with pytest.raises(InputError, match=r":1: (malformed JSON|grade 1000)"):
        skillret.read_qrels(path, fmt="queries-jsonl")


def test_cli_json_integer_too_large(tmp_path, capsys):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.json"
    qrels.write_bytes(b"q1 0 s1 1\n")
    run.write_bytes(b'{"q1": {"s1": ' + LARGE + b"}}")
    status = cli.main(["score", "--qrels", str(qrels), "--run", str(run)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "too large to be stored in a double" in err


# Found by fuzz_parquet (within its first 600 inputs): a Parquet file whose footer reads but
# whose pages are corrupt raised OSError (or ArrowInvalid) as the run was streamed; a flipped
# byte elsewhere gave column names or ids that are not UTF-8 (UnicodeDecodeError), which
# Parquet does not check. Every single-byte flip of a small run is tried.
def _parquet_bytes(table) -> bytes:
    import io

    import pyarrow.parquet as pq
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_parquet_every_flipped_byte(tmp_path):
    import pyarrow as pa
    good = _parquet_bytes(pa.table({"query_id": ["q1", "q1", "q2"], "skill_id": ["a", "b", "c"],
                                    "score": [1.0, 2.0, 3.0]}))
    path = tmp_path / "run.parquet"
    unreadable = 0
    for at in range(4, len(good) - 8):  # the magic numbers aside
        bad = bytearray(good)
        bad[at] ^= 0xFF
        path.write_bytes(bad)
        for read in (lambda: skillret.open_run(path).read(),
                     lambda: list(skillret.open_run(path).chunks()),
                     lambda: skillret.read_qrels(path)):
            try:
                read()
            except InputError as exc:
                assert "\n" not in str(exc)
                unreadable += "is not a readable Parquet file" in str(exc)
    assert unreadable  # the corrupt pages were met


@pytest.mark.parametrize("how", ["read", "chunks", "qrels", "evaluate"])
def test_parquet_ids_not_utf8(tmp_path, how):
    import pyarrow as pa
    import pyarrow.parquet as pq
    ids = pa.array([b"q1", b"q\xff"], pa.binary()).view(pa.string())  # unchecked, as a file's
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ids, "skill_id": ["a", "b"], "score": [1.0, 2.0]}),
                   path)
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(b"q1 0 a 1\n")
    with pytest.raises(InputError, match="column 'query_id' holds text that is not UTF-8"):
        if how == "qrels":
            skillret.read_qrels(path, columns={"relevance": "score"})
        elif how == "read":
            skillret.open_run(path).read()
        elif how == "chunks":
            list(skillret.open_run(path).chunks())
        else:
            skillret.evaluate(qrels, path)


# Found by fuzz_cli: a --facets JSON lines file that is not UTF-8 ended `score --breakdown` with
# a UnicodeDecodeError traceback. Its siblings, found reading that reader: an integer of over
# 4,300 digits, nesting deeper than Python's parser goes, a key column named twice.
@pytest.mark.parametrize("name, content, message", [
    ("f.jsonl", b'{"id": "q1", "ki\x8a\x9b\xdd\xc5 "a"}\n', r"f.jsonl:1: is not UTF-8 text"),
    ("f.jsonl", b'{"id": "q1", "kind": ' + HUGE + b"}\n", r"f.jsonl:1: not valid JSON"),
    ("f.jsonl", b'{"id": "q1", "kind": ' + b"[" * 100_000 + b"\n", r"nested too deeply"),
    ("f.jsonl", b"[" * 100_000, r"f.jsonl: JSON nested too deeply"),
    ("f.csv", b"id,kind,id\nq1,a,q2\n", r"has 2 columns named 'id'"),
])
def test_cli_facets_file(tmp_path, capsys, monkeypatch, name, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.qrels").write_bytes(b"q1 0 s1 1\nq2 0 s3 1\n")
    (tmp_path / "r.trec").write_bytes(b"q1 Q0 s1 1 2.5 t\nq2 Q0 s3 1 0.5 t\n")
    (tmp_path / name).write_bytes(content)
    status = cli.main(["score", "--qrels", "q.qrels", "--run", "r.trec", "--breakdown", "kind",
                       "--facets", name])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(message, err), err


# Found by fuzz_csv (stop 24): a lone CR inside a TSV ends a row for the CSV parser, but the
# line numbers were counted at "\n" only, so a file had more rows than numbered lines, and the
# score/rank-swap check (scoring/swaps.py) indexed past the end: an IndexError. Line numbers
# now end where the parser's rows end, and a message names the right line.
def test_a_lone_cr_ends_a_row_and_its_line(tmp_path):
    found = (b"query_id\tskill_id\tscore\trank\nq\ts1\x13\t3.\t15\nq1\ts9\t2.0\t3\rq2\ts3\t0.5\t1"
             b"\nq2\t1\t2\t0.250\n")                      # the input, as found
    (tmp_path / "found.tsv").write_bytes(found)
    (tmp_path / "qrels.txt").write_text("q1 0 s9 1\nq2 0 s3 2\n")
    try:
        skillret.evaluate(tmp_path / "qrels.txt", tmp_path / "found.tsv")
    except InputError as exc:
        assert "\n" not in str(exc)
    # a bad value after lone CRs: its line, counted as an editor shows them
    (tmp_path / "cr.tsv").write_bytes(b"query_id\tskill_id\tscore\rq1\ts1\t1.5\rq1\ts2\tnan\r")
    with pytest.raises(InputError, match=r"cr\.tsv:3: "):
        skillret.open_run(tmp_path / "cr.tsv").read()
    (tmp_path / "crlf.csv").write_bytes(b"query_id,skill_id,score\r\n\r\nq1,s1,1.5\r\nq1,s2,inf\r\n")
    with pytest.raises(InputError, match=r"crlf\.csv:4: "):
        skillret.open_run(tmp_path / "crlf.csv").read()


# Found by fuzz_gzip (stop 24): a JSON lines object written over two lines is one row for the
# JSON reader and two lines for the line count; the row-to-line map then had one entry too many
# (IndexError). Rows read as the reader reads them, and a message names no line rather than a
# wrong one.
def test_a_json_lines_object_over_two_lines(tmp_path):
    found = (b'{"query_id": "q1", "skill_id": "s1", "score": 3.5,\n "rank": 1}\n'
             b'{"query_id": "q1", "skill_i": 1}\n'
             b'{"query_id": "q2", "skill_id": "s1", "score": 0.25, "rank": 2}\n')
    (tmp_path / "run.jsonl").write_bytes(found)
    run = skillret.open_run(tmp_path / "run.jsonl").read(with_rank=True)
    assert run.queries.to_pylist() == ["q1", "q2"]
    (tmp_path / "qrels.jsonl").write_bytes(b'{"query_id": "q1",\n "skill_id": "s1", '
                                           b'"relevance": 1}\n{"query_id": "q2", "skill_id": '
                                           b'"s2", "relevance": 1.5}\n')
    with pytest.raises(InputError) as caught:   # row 2 is line 3: no line named, not line 2
        skillret.read_qrels(tmp_path / "qrels.jsonl")
    assert "\n" not in str(caught.value) and "qrels.jsonl:2" not in str(caught.value)
    assert "1.5" in str(caught.value)
    (tmp_path / "ok.jsonl").write_bytes(b'{"query_id": "q1",\n "skill_id": "s1", "score": 2}\n'
                                        b'{"query_id": "q1", "skill_id": "s2", "score": 1}\n')
    run = skillret.open_run(tmp_path / "ok.jsonl").read()
    assert run.skill_id.to_pylist() == ["s1", "s2"]


# The line count and the parser, on generated files: any mix of LF, CR and CRLF ends, blank
# lines anywhere (the header's too): one number per row the parser gives, each the line (as an
# editor counts them) where that row's text is.
@settings(max_examples=examples(200), deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["q1", "q2", "q10"]),
                               st.sampled_from(["s1", "s2", "a-b"]),
                               st.sampled_from(["1.5", "2", "-0.25"])), min_size=1, max_size=12),
       ends=st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=30, max_size=30),
       blanks=st.lists(st.booleans(), min_size=30, max_size=30), last_end=st.booleans())
def test_line_numbers_are_the_parsers_rows(tmp_path_factory, rows, ends, blanks, last_end):
    from skillret.io.table_files import content_lines, read_table

    lines = ["query_id,skill_id,score"] + [",".join(r) for r in rows]
    text, where, number = "", [], 0
    for i, line in enumerate(lines):
        if blanks[i]:   # a blank line before this one, ended as the line before it (a CR then
            text += ends[i - 1] if i else ends[-1]       # an LF would be one CRLF end)
            number += 1
        text += line
        number += 1
        where.append(number)
        if i < len(lines) - 1 or last_end:
            text += ends[i]
    path = tmp_path_factory.mktemp("cr") / "run.csv"
    path.write_bytes(text.encode())
    table, numbers = read_table(path, "csv")
    assert table.num_rows == len(rows)
    assert numbers is not None and numbers.tolist() == where[1:]
    assert content_lines(text.encode(), True, lone_cr_ends=True).tolist() == where[1:]
