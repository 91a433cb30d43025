"""Surmise functions (kstp.kst.surmise, kstp.loaders.kstio's surmise-function files) against kstMatrix and kstIO.

Reference: tests/data/kst/surmise_validate.json and kstio/<name>_sf.csv, written by
tests/data/kst/surmise_validate.R: kstMatrix 2.3-4's ``kmsurmisefunction`` and ``kmSF2basis``,
kstIO 0.4-2's ``write_surmisefunction`` and ``read_surmisefunction``, on kstMatrix's ``xpl$space``,
pks's DoignonFalmagne7 and chess DST1 (where two items share a clause).
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from kstp.evaluators.structures import analyse, load_structure
from kstp.kst.analysis import Structure, span
from kstp.kst.surmise import surmise_function, surmise_function_basis
from kstp.loaders.kstio import read_kst_file, write_surmise_function

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
REFERENCE = json.loads((DATA / "surmise_validate.json").read_text())
NAMES = ["xpl", "DoignonFalmagne7", "chess_dst1"]


def _rows(patterns):
    return np.array([[int(c) for c in p] for p in patterns], dtype=np.uint8)


def _patterns(matrix):
    return ["".join(map(str, row)) for row in np.asarray(matrix).tolist()]


@pytest.mark.parametrize("name", NAMES)
def test_surmise_function_equals_kstmatrix(name):
    ref = REFERENCE[f"sf_{name}"]
    items, clauses = surmise_function(Structure.build(ref["items"], _rows(ref["states"])))
    assert (items, _patterns(clauses)) == (ref["clause_items"], ref["clauses"])  # kmsurmisefunction's order too
    assert _patterns(surmise_function_basis(clauses)) == ref["basis"]  # kmSF2basis


@pytest.mark.parametrize("name", NAMES)
def test_surmise_function_files_equal_kstio_byte_for_byte(tmp_path, name):
    ref, file = REFERENCE[f"sf_{name}"], DATA / "kstio" / f"{name}_sf.csv"
    read = read_kst_file(file)
    assert (read.kind, read.items, read.labels) == ("surmisefunction", ref["items"], ref["clause_items"])
    assert _patterns(read.matrix) == ref["clauses"]
    written = write_surmise_function(tmp_path / "sf.csv", read.labels, read.matrix, read.items)
    assert written.read_bytes() == file.read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_a_surmise_function_file_is_analysed_as_the_space_it_gives(name):
    ref = REFERENCE[f"sf_{name}"]
    structure, source = load_structure(None, None, DATA / "kstio" / f"{name}_sf.csv")
    assert sorted(_patterns(structure.states)) == sorted(ref["states"])
    assert "the space its surmise function spans" in source
    rows = analyse(structure, "surmisefunction")["rows"]
    assert [r["item"] for r in rows] == ref["clause_items"]


def test_clauses_are_the_minimal_states_holding_each_item_by_brute_force():
    rng = np.random.default_rng(48)
    for _ in range(30):
        base = rng.integers(0, 2, size=(4, 5)).astype(np.uint8)
        states = span(base[base.any(axis=1)])
        k = Structure.build("abcde", states)
        items, clauses = surmise_function(k)
        sets = [frozenset(np.flatnonzero(s)) for s in states]
        for j, q in enumerate("abcde"):
            holding = [s for s in sets if j in s]
            minimal = {s for s in holding if not any(t < s for t in holding)}
            assert {frozenset(np.flatnonzero(c)) for i, c in zip(items, clauses, strict=True) if i == q} == minimal
        # the clauses span the space back (Doignon & Falmagne 1999, Th. 5.1.3)
        assert sorted(_patterns(span(surmise_function_basis(clauses)))) == sorted(_patterns(states))
        assert all(a | b in sets for a, b in combinations(sets, 2))
