"""kstIO's file formats (kstp.loaders.kstio) against files R's kstIO 0.4-2 wrote.

tests/data/kst/kstio/ was written by tests/data/kst/kst_reference.R (``write_kstructure``,
``write_kspace``, ``write_kbase``, ``write_surmiserelation``, ``write_kdata``) from pks's
example data; kstp reads each and writes it back byte for byte. The structures and
relations read are held to the matrices in kst_reference.json (pks's own).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kstp.errors import InputError
from kstp.loaders.kstio import basis_codes, letters, read_kst_file, write_kst_file

KSTIO = Path(__file__).resolve().parents[1] / "data" / "kst" / "kstio"
REFERENCE = json.loads((KSTIO.parent / "kst_reference.json").read_text())


def _matrix(name):
    return np.array([[int(c) for c in p] for p in REFERENCE[name]["states"]], dtype=np.uint8)


@pytest.mark.parametrize(("file", "kind", "fmt", "reference"), [
    ("endm.kst", "structure", "srbt", "endm_K"),
    ("endm_kst.kst", "structure", "kst", "endm_K"),
    ("endm_matrix.kst", "structure", "matrix", "endm_K"),
    ("DoignonFalmagne7.spc", "space", "srbt", "DoignonFalmagne7"),
    ("chess_dst3.kst", "structure", "srbt", "chess_dst3"),
])
def test_structures_written_by_kstio_are_read_and_written_back(tmp_path, file, kind, fmt, reference):
    read = read_kst_file(KSTIO / file)
    assert (read.kind, read.format, read.named) == (kind, fmt, False)
    assert read.matrix.tolist() == _matrix(reference).tolist()
    assert read.items == letters(read.matrix.shape[1])
    again = write_kst_file(tmp_path / file, kind, read.matrix, format=fmt)
    assert again.read_bytes() == (KSTIO / file).read_bytes()


def test_csv_structure_keeps_item_names(tmp_path):
    read = read_kst_file(KSTIO / "endm_K.csv", kind="structure")
    assert (read.format, read.items, read.named, read.labels) == ("csv", ["a", "b", "c", "d"], True, None)
    assert read.matrix.tolist() == _matrix("endm_K").tolist()
    written = write_kst_file(tmp_path / "k.csv", "structure", read.matrix, read.items, "csv")
    assert written.read_bytes() == (KSTIO / "endm_K.csv").read_bytes()


@pytest.mark.parametrize("file", ["DoignonFalmagne7.bsr", "DoignonFalmagne7_kst.bsr"])
def test_basis_codes_equal_kstio(tmp_path, file):
    read = read_kst_file(KSTIO / file)
    assert read.kind == "basis"
    # kbase(DoignonFalmagne7): {a}, {b}, {a,b,c}, {a,b,d}, {a,b,c,e}; 1 where minimal for the item
    assert read.codes.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [2, 2, 1, 0, 0], [2, 2, 0, 1, 0],
                                   [2, 2, 2, 0, 1]]
    assert basis_codes(read.matrix).tolist() == read.codes.tolist()
    fmt = "kst" if "_kst" in file else "srbt"
    assert write_kst_file(tmp_path / file, "basis", read.matrix, format=fmt).read_bytes() == (KSTIO / file).read_bytes()


@pytest.mark.parametrize(("file", "fmt"), [("DoignonFalmagne7.spr", "srbt"), ("DoignonFalmagne7_matrix.spr", "matrix")])
def test_relations_equal_kst(tmp_path, file, fmt):
    read = read_kst_file(KSTIO / file)
    assert read.kind == "relation" and read.matrix.tolist() == REFERENCE["DoignonFalmagne7"]["relation"]
    assert write_kst_file(tmp_path / file, "relation", read.matrix, format=fmt).read_bytes() == \
        (KSTIO / file).read_bytes()


@pytest.mark.parametrize(("file", "learners", "items"), [("endm.dat", 200, 4), ("DoignonFalmagne7.dat", 1000, 5),
                                                        ("chess.dat", 92, 16)])
def test_data_files_written_by_kstio(tmp_path, file, learners, items):
    read = read_kst_file(KSTIO / file)
    assert read.kind == "data" and read.matrix.shape == (learners, items)
    assert write_kst_file(tmp_path / file, "data", read.matrix).read_bytes() == (KSTIO / file).read_bytes()


def test_data_csv_and_pks_style_matrices_with_row_names(tmp_path):
    read = read_kst_file(KSTIO / "DoignonFalmagne7_data.csv", kind="data")
    assert read.items == ["V1", "V2", "V3", "V4", "V5"] and read.matrix.shape == (1000, 5)
    assert read.matrix.tolist() == read_kst_file(KSTIO / "DoignonFalmagne7.dat").matrix.tolist()
    # R's write.csv(K) of a pks matrix: an empty first header cell, row names first
    path = tmp_path / "K.csv"
    path.write_text('"","a","b"\n"00",0,0\n"10",1,0\n"11",1,1\n')
    read = read_kst_file(path)
    assert read.labels == ["00", "10", "11"] and read.items == ["a", "b"] and read.matrix.tolist() == [
        [0, 0], [1, 0], [1, 1]]
    # kstp's wide responses: a learner column, then items; a fitted structure: a probability column after them
    path.write_text("person_id,q1,q2,probability\nl1,0,0,0.25\nl2,1,0,0.75\n")
    read = read_kst_file(path)
    assert read.labels == ["l1", "l2"] and read.items == ["q1", "q2"] and read.extra["probability"].tolist() == [
        0.25, 0.75]


def test_probabilities_go_out_as_r_reads_them(tmp_path):
    path = write_kst_file(tmp_path / "fit.csv", "structure", [[0, 0], [1, 1]], ["q1", "q2"], "csv",
                          extra={"probability": [1 / 3, 2 / 3]})
    assert path.read_text() == '"q1","q2","probability"\n0,0,0.333333333333333\n1,1,0.666666666666667\n'
    read = read_kst_file(path)
    assert read.extra["probability"] == pytest.approx([1 / 3, 2 / 3], abs=1e-14)


@pytest.mark.parametrize(("text", "message"), [
    ("#SRBT v2.0 structure ASCII\n2\n3\n00\n10\n", r"k.kst:5: the file announces 3 rows and has 2"),
    ("#SRBT v2.0 structure ASCII\n2\n2\n00\n1x\n", r"k.kst:5: expected 2 cells of 0 or 1 with no separator, "
                                                   r"found '1x'"),
    ("#SRBT v2.0 structure ASCII\ntwo\n2\n00\n11\n", r"k.kst:2: expected the number of items"),
    ("#SRBT v2.0 thing ASCII\n2\n", r"k.kst:1: not an SRBT v2.0 header"),
    ("2\n2\n00\n011\n", r"k.kst:4: expected 2 cells"),
    ("", r"k.kst:1: empty file"),
])
def test_bad_files_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "k.kst"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_kst_file(path)


def test_kind_disagreements_and_layouts_are_refused(tmp_path):
    with pytest.raises(InputError, match="the file holds a relation, not a structure"):
        read_kst_file(KSTIO / "DoignonFalmagne7.spr", kind="structure")
    with pytest.raises(InputError, match="a relation has no KST Tools layout"):
        write_kst_file(tmp_path / "r.spr", "relation", np.eye(2), format="kst")
    with pytest.raises(InputError, match="not as a bare matrix"):
        write_kst_file(tmp_path / "b.bsr", "basis", np.eye(2), format="matrix")
    with pytest.raises(InputError, match="go into a CSV file"):
        write_kst_file(tmp_path / "k.kst", "structure", np.eye(2), extra={"p": [0.5, 0.5]})
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0,1\n1,x\n")
    with pytest.raises(InputError, match=r"bad.csv:3: column 2 \('b'\) holds 'x'"):
        read_kst_file(bad)


@pytest.mark.parametrize(("text", "kind", "message"), [
    # issue 48: each of these dropped column c (or took a as row names) and read on without it
    ("a,b,c\n0,0,0\n1,0,0\n1,1,2\n", None, r"k.csv:4: column 3 \('c'\) holds '2': an item column holds 0 or 1 "
                                          r"\(a column of state probabilities is named probability\)"),
    ("a,b,c\n0,0,0\n1,0,0.5\n1,1,1\n", None, r"k.csv:3: column 3 \('c'\) holds '0.5'"),
    ("a,b,c\n2,0,0\n1,0,0\n1,1,1\n", None, r"k.csv:2: column 1 \('a'\) holds '2'"),
    ("id,a,b\nl1,0,1\nl2,1,2\n", "data", r"k.csv:3: column 3 \('b'\) holds '2': an item column holds 0 or 1$"),
    ("a,b,probability\n0,0,0.5\n1,1,0.5\n", "data", r"k.csv:2: column 3 \('probability'\) holds '0.5'"),
    ("a,b,probability\n0,0,half\n1,1,0.5\n", None, r"k.csv:2: column 3 \('probability'\) holds 'half': a "
                                                     r"probability column holds numbers"),
    ("a;b;c\n0;0;0\n1;1;1\n", None, r"k.csv:1: cells separated by ';': kstp reads comma-separated CSV"),
    ("a\tb\n0\t0\n1\t1\n", "data", r"k.csv:1: cells separated by tabs"),
    ("a,b\n0,0\n\n1,x\n", None, r"k.csv:4: column 2 \('b'\) holds 'x'"),  # the file's line, past a blank one
])
def test_a_csv_cell_that_is_not_0_1_is_refused_with_line_and_column(tmp_path, text, kind, message):
    path = tmp_path / "k.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_kst_file(path, kind=kind)


def test_numeric_learner_ids_are_row_names_and_a_0_1_first_column_an_item(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,a,b\n101,0,1\n102,1,1\n103,0,0\n")
    read = read_kst_file(path, kind="data")
    assert read.labels == ["101", "102", "103"] and read.items == ["a", "b"]
    path.write_text("a,b\n1,0\n0,1\n")
    read = read_kst_file(path, kind="data")
    assert read.labels is None and read.matrix.tolist() == [[1, 0], [0, 1]]


def test_a_csv_without_header_has_kstio_letters_and_an_empty_header_cell_is_refused(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("0,0,0\n1,0,0\n1,1,1\n")  # issue 48: this read "item '0' names two columns"
    read = read_kst_file(path)
    assert (read.items, read.named, read.labels) == (["a", "b", "c"], False, None)
    assert read.matrix.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 1]]
    path.write_text("0,0\n1,2\n")
    with pytest.raises(InputError, match=r"k.csv:2: column 2 \('b'\) holds '2'"):  # line numbers count the first row
        read_kst_file(path)
    path.write_text("a,,c\n0,0,0\n1,1,1\n")  # kst analyse named the middle item '', fit blim refused it
    with pytest.raises(InputError, match=r"k.csv:1: column 2 has no name in the header; name every item column"):
        read_kst_file(path)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_space_and_its_base_go_out_in_kstio_order_byte_for_byte(tmp_path, n):
    """kstIO writes a kspace's states and a kbase's elements by size, then members (the sets package's
    order): tests/data/kst/surmise_validate.R wrote three random spaces with write_kspace and write_kbase, and
    their states shuffled as the input."""
    from kstp.kst.analysis import Structure
    from kstp.loaders.kstio import kstio_order

    read = read_kst_file(KSTIO / f"order{n}_shuffled.csv", kind="space")
    structure = Structure.build(read.items, read.matrix)
    for kind, matrix, name in (("space", structure.states, f"order{n}.spc"),
                               ("basis", structure.states[structure.base()], f"order{n}.bsr")):
        written = write_kst_file(tmp_path / name, kind, matrix[kstio_order(matrix)])
        assert written.read_bytes() == (KSTIO / name).read_bytes()


_SF = '"Item","a","b","c"\n"a","1","0","0"\n"b","1","1","0"\n'


@pytest.mark.parametrize(("rows", "message"), [
    # each was read before: the stray row made the file a structure of three states, not a surmise function
    ('"z","1","1","1"\n', r"sf.csv:4: a clause of 'z', which is not an item of the header \(a, b, c\); each row "
                          r"of a surmise function names the item it is a clause of"),
    # ... and this one spanned a family without c, not a knowledge structure
    ('"c","1","1","0"\n', r"sf.csv:4: the clause of 'c' does not hold 'c' \(its 'c' cell is 0\)"),
    ("", r"sf.csv:1: item 'c' has no clause \(no row names it\)"),
])
def test_a_surmise_function_with_a_stray_or_missing_clause_is_refused(tmp_path, rows, message):
    path = tmp_path / "sf.csv"
    path.write_text(_SF + rows)
    with pytest.raises(InputError, match=message):
        read_kst_file(path)
    path.write_text(_SF + '"c","1","1","1"\n')
    read = read_kst_file(path)
    assert (read.kind, read.labels) == ("surmisefunction", ["a", "b", "c"])


@pytest.mark.parametrize("header", ["a", '"a"'])
def test_a_csv_of_one_item_column_is_read_as_a_csv(tmp_path, header):
    """One column has no comma: the file was taken for a bare matrix and refused ("k.csv:1: expected 1 cells of
    0 or 1 with no separator, found 'a'") by every command, fit slm and kst validate on a 1-item structure too."""
    path = tmp_path / "k.csv"
    path.write_text(f"{header}\n0\n1\n")
    read = read_kst_file(path)
    assert (read.format, read.items, read.named, read.matrix.tolist()) == ("csv", ["a"], True, [[0], [1]])
    path.write_text(f"{header}\n0\n2\n")
    with pytest.raises(InputError, match=r"k.csv:3: column 1 \('a'\) holds '2'"):
        read_kst_file(path)
    path.write_text("0\n1\n")  # no header: kstIO's letters, as a matrix read them
    assert read_kst_file(path).items == ["a"]


def test_one_unnamed_column_is_said_as_one():
    """A 1-item structure file was 'unnamed columns taken as a ... a in order'."""
    from kstp.loaders.kstio import KstFile, align_columns

    one = KstFile("structure", "srbt", np.array([[0], [1]], np.uint8), ["a"], False)
    assert align_columns(one, ["ds:q1"], "k.kst")[1] == "the unnamed column taken as ds:q1"


def test_a_structure_given_for_answers_is_named_as_such():
    """fit slm --responses DoignonFalmagne7.spc said 'the file holds a space, not a data'."""
    with pytest.raises(InputError, match=r"DoignonFalmagne7.spc:1: the file holds a space, not response data$"):
        read_kst_file(KSTIO / "DoignonFalmagne7.spc", kind="data")
    with pytest.raises(InputError, match=r"DoignonFalmagne7.dat:1: the file holds response data, not a relation$"):
        read_kst_file(KSTIO / "DoignonFalmagne7.dat", kind="relation")


def test_a_surmise_function_given_for_answers_is_refused():
    """fit slm --responses DoignonFalmagne7_sf.csv fitted its five clauses as five learners (a ... e as ids)."""
    with pytest.raises(InputError, match=r"DoignonFalmagne7_sf.csv:1: the file holds a surmise function \(its first "
                                         r"column, 'Item', names an item on every row"):
        read_kst_file(KSTIO / "DoignonFalmagne7_sf.csv", kind="data")
