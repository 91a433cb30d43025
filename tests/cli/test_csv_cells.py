"""Every CSV kstp writes shows a hostile id as text in a spreadsheet (OWASP's CSV-injection rule), and
kstp reads its own files back unchanged; on each engine.

Expected: the cells of OWASP's rule (a leading apostrophe before ``=``, ``+``, ``-``, ``@``, tab,
carriage return), numbers as they are, and the ids themselves after a round trip.
"""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from kstp.loaders.kstio import read_kst_file
from tests.cli.test_cli import ingest_toy, kstp, toy_files  # noqa: F401 (fixtures)

HOSTILE = ["@SUM(1+1)*cmd", "=HYPERLINK(\"http://x\")", "-2+3", "+1", "'=x"]


def _hostile_learners(kstp, toy_files, tmp_path):  # noqa: F811
    ingest_toy(kstp, toy_files)
    answers = tmp_path / "hostile.csv"
    with answers.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["learner", "item", "correct"])
        for n, learner in enumerate(HOSTILE):
            writer.writerows([learner, f"q{i}", (i + n) % 2] for i in range(1, 9))
    assert kstp("ingest", "responses", answers, "--dataset", "toy").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0


def test_csv_outputs_neutralise_formula_cells(kstp, toy_files, tmp_path):  # noqa: F811
    _hostile_learners(kstp, toy_files, tmp_path)
    assert kstp("evaluate", "psr", "--dataset", "toy", "--out", tmp_path / "out").exit_code == 0
    # --format csv of a query: the learner ids as text, the figures as numbers
    result = kstp("query", "dataset_learner_figures", "-p", "dataset=toy", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    by_local = {r["localId"]: r for r in rows}
    assert {"'@SUM(1+1)*cmd", "'=HYPERLINK(\"http://x\")", "'-2+3", "'+1", "''=x"} <= set(by_local)
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row.values())
    # q1, q3, q5, q7 right of the 8 answered (q8, without a concept, counts in accuracy as in the release's
    # eval_acc): a number stays a number
    assert by_local["'-2+3"]["accuracy"] == str(4 / 8)
    # a report's CSV file: evaluate psr's per-learner table, its index the learner ids
    learners = (tmp_path / "out" / "psr_learners_toy.csv").read_text()
    assert "\n'toy:@SUM(1+1)*cmd," not in learners  # the id is the dataset's prefix and the local id
    ids = pd.read_csv(tmp_path / "out" / "psr_learners_toy.csv", index_col=0).index
    assert all(not str(i).startswith(("=", "+", "-", "@")) for i in ids)


def test_kst_export_csv_round_trips_hostile_ids(kstp, toy_files, tmp_path):  # noqa: F811
    _hostile_learners(kstp, toy_files, tmp_path)
    out = tmp_path / "data.csv"
    result = kstp("kst", "export", "--dataset", "toy", "--what", "data", "--to", out, "--json")
    assert result.exit_code == 0, result.output
    labels = [row[0] for row in csv.reader(io.StringIO(out.read_text()))][1:]
    assert labels == ["''=x", "'+1", "'-2+3", "'=HYPERLINK(\"http://x\")", "'@SUM(1+1)*cmd"]  # L1-L3: incomplete
    back = read_kst_file(out, kind="data")
    assert back.labels == sorted(HOSTILE)  # as ingested: kstp reads its own file back
    assert json.loads(result.stdout)["note"] == "3 learners left out: they did not answer every item"
