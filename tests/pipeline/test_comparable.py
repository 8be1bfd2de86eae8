"""What differs between two judgments and two metric contracts, worded (no git, no DVC)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skillret.columnar.qrels import Qrels
from skillret.errors import ConfigError
from skillret.io.per_query import PerQuery
from skillret.pipeline import comparable


def frame(rows):
    out = {}
    for query, skill, grade in rows:
        out.setdefault(query, {})[skill] = grade
    return out


def test_judgments_between_names_every_kind_of_change():
    old = frame([("q1", "a", 2), ("q1", "b", 1), ("q2", "a", 2), ("q3", "c", 2), ("q4", "d", 1)])
    new = frame([("q1", "a", 2), ("q1", "b", 2), ("q2", "a", 2), ("q4", "d", 1), ("q4", "e", 1),
                 ("q5", "a", 2)])
    differences, same = comparable.judgments_between(old, new)
    assert differences == [
        "1 query added (q5)", "1 query removed (q3)",
        "2 judgments changed in 2 queries (e.g. q1 b: grade 1 -> grade 2)"]
    assert same == {"q2"}
    assert comparable.judgments_between(old, old) == ([], {"q1", "q2", "q3", "q4"})


def test_contracts_between_names_the_version_level_and_cutoffs():
    profile = {"query_set": "run-judged", "relevance_level": 1, "metrics": ["NDCG@10"]}
    old = {"skillret_eval": "0.1.0", "tie_rule": "t", "profiles": {"official": profile}}
    new = {"skillret_eval": "0.2.0", "tie_rule": "t", "profiles": {"official": {
        **profile, "relevance_level": 2, "metrics": ["NDCG@5"]}}}
    assert comparable.contracts_between(old, new) == [
        "skillret-eval 0.1.0 -> 0.2.0", "official's relevance level 1 -> 2",
        "official's metrics (cutoffs)"]
    assert comparable.contracts_between(old, old) == []


def test_restricted_keeps_the_queries_asked_for_in_order():
    table = PerQuery(np.array(["q1", "q2", "q3"]), {"NDCG@10": np.array([0.1, 0.2, 0.3])}, "t")
    kept = comparable.restricted({"run": table}, {"q3", "q1"})["run"]
    assert list(kept.query_ids) == ["q1", "q3"] and list(kept.values["NDCG@10"]) == [0.1, 0.3]
    assert comparable.restricted({"run": table}, None)["run"] is table


def test_headed_puts_the_note_first_in_every_format():
    assert comparable.headed("table\n", "note", "terminal") == "note\ntable\n"
    assert comparable.headed("<!-- m -->\n### t\n\nbody\n", "note", "markdown") == \
        "<!-- m -->\n### t\n\n> **note**\n\nbody\n"
    assert list(json.loads(comparable.headed('{"a": 1}', "note", "json"))) == ["note", "a"]
    assert comparable.headed("a,b\n", "note", "csv") == "a,b\n"
    assert comparable.headed("x", None, "terminal") == "x"


class Revision:
    """What `comparable.check` reads of a revision: fingerprints, contracts, the qrels file."""

    def __init__(self, label, sha, judged, version="0.1.0"):
        self.label, self.sha, self.judged, self.version = label, sha, judged, version

    def judgments(self, run):
        return {"sha256": self.sha, "queries": 2} if self.sha else {}

    def contract(self, run):
        return {"skillret_eval": self.version}

    def qrels(self):
        if self.judged is None:
            raise AssertionError("the qrels were read though the fingerprints are equal")
        return Qrels.from_dict(self.judged)


def test_check_reads_the_judgments_only_when_their_fingerprints_differ():
    old = Revision("main", "abc", None)
    assert comparable.check(old, Revision("pr", "abc", None), ["run"], False) == (None, None)
    with pytest.raises(ConfigError, match="skillret-eval 0.1.0 -> 0.2.0; "
                                          "--allow-different-judgments compares the 2 queries"):
        comparable.check(old, Revision("pr", "abc", None, "0.2.0"), ["run"], False)
    a, b = {"q1": {"s": 1}, "q2": {"s": 1}}, {"q1": {"s": 2}, "q2": {"s": 1}}
    keep, note = comparable.check(Revision("main", "abc", a), Revision("pr", "def", b), ["run"],
                                  True)
    assert keep == {"q2"} and note.startswith("Not comparable as is: main and pr were not "
                                              "scored alike (1 judgment changed in 1 query")
    keep, _ = comparable.check(Revision("main", None, a), Revision("pr", None, a), ["run"], True)
    assert keep is None  # no fingerprints (an older revision): the files say they are equal
