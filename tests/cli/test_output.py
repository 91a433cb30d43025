"""Which graph a command opened, read-only opening, the write lock, exit codes, input refusals at the CLI."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.ladybug import LadybugStore
from tests.conftest import load_toy

ROOT = Path(__file__).resolve().parents[2]


def _run(graph, *args):
    return CliRunner().invoke(cli, ["--graph", graph, *map(str, args)])


def _toy(tmp_path) -> Path:
    path = tmp_path / "graph"
    store = LadybugStore(path)
    store.ensure_schema()
    load_toy(store, tmp_path)
    store.close()
    return path


def test_db_stats_names_the_graph_and_a_missing_graph_is_named(tmp_path):
    path = _toy(tmp_path)
    result = _run(f"ladybug:{path}", "db", "stats", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["graph"] == f"ladybug:{path.resolve()}"
    assert _run(f"ladybug:{path}", "db", "stats").output.splitlines()[0] == f"Graph: ladybug:{path.resolve()}"
    missing = _run(f"ladybug:{tmp_path / 'none'}", "db", "stats")
    assert missing.exit_code == 1
    assert f"no graph at {(tmp_path / 'none').resolve()}: nothing was ingested there yet" in missing.output
    assert not (tmp_path / "none").exists()  # a read-only command creates nothing


def test_a_command_that_finds_nothing_names_the_graph(tmp_path):
    path = _toy(tmp_path)
    empty = _run(f"ladybug:{path}", "query", "runs_of", "-p", "evaluator=x", "-p", "model=m", "-p", "dataset=toy")
    assert empty.exit_code == 0 and f"runs_of: no rows in the graph ladybug:{path.resolve()}" in empty.output
    result = _run(f"ladybug:{path}", "kst", "fringe", "--dataset", "frcsub", "--state", "q1")
    assert result.exit_code == 1
    assert result.output.strip().endswith(f"(graph: ladybug:{path.resolve()})")
    assert "unknown dataset 'frcsub'" in result.output


def test_read_only_commands_leave_the_graph_file_untouched(tmp_path):
    path = _toy(tmp_path)
    before, files = hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir())
    for args in (("db", "stats"), ("query", "datasets"), ("kst", "check", "--dataset", "toy", "--state", "q1")):
        assert _run(f"ladybug:{path}", *args).exit_code == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_a_writable_command_that_writes_nothing_leaves_the_graph_file_untouched(tmp_path):
    """Ladybug checkpoints a database opened for writing when it closes; a no-op command must not open it so."""
    path = _toy(tmp_path)
    ingest = ("ingest", "standards", tmp_path / "toy.csv", "--edges", tmp_path / "toy_edges.csv", "--framework", "toy")
    derive = ("derive", "question-prerequisites", "--dataset", "toy")
    assert _run(f"ladybug:{path}", *derive).exit_code == 0  # writes the derived edges
    before, files = hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir())
    for args in (("db", "init"), ingest, derive):  # each finds everything in place
        result = _run(f"ladybug:{path}", *args)
        assert result.exit_code == 0, result.output
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before, args
        assert sorted(p.name for p in tmp_path.iterdir()) == files
    assert _run(f"ladybug:{path}", *derive[:-1], "toy", "--rule", "reflexive").exit_code == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() != before  # a command that writes still writes


def test_a_second_writer_is_told_who_holds_the_lock_and_readers_go_on(tmp_path):
    path = _toy(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[2]); "
         "import pandas as pd; from kstp.graph.ladybug import LadybugStore; s = LadybugStore(sys.argv[1]); "
         "s.write_nodes('Framework', pd.DataFrame([{'id': 'held'}])); "
         "print('open', flush=True); time.sleep(60)", str(path), str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        time.sleep(0.5)
        writer = _run(f"ladybug:{path}", "db", "reset", "--yes")  # refused at its first write, before deleting
        assert writer.exit_code == 1
        assert f"the graph at {path.resolve()} is open for writing in process {holder.pid}; wait for it" in \
            writer.output and "Neo4j" in writer.output
        reader = _run(f"ladybug:{path}", "query", "datasets", "--format", "json")
        assert reader.exit_code == 0 and [d["datasetId"] for d in json.loads(reader.stdout)] == ["toy"]
    finally:
        holder.kill()
        holder.wait()


def test_exit_codes_usage_and_bad_input(tmp_path):
    path = _toy(tmp_path)
    assert _run(f"ladybug:{path}", "db", "stats", "--no-such-option").exit_code == 2
    (tmp_path / "r.csv").write_bytes("person,q1\np\xe9,1\n".encode("latin-1"))
    result = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "r.csv", "--dataset", "toy")
    assert result.exit_code == 1
    assert "r.csv:2: not UTF-8 text (byte 11); save the file as UTF-8" in result.output


def test_ingest_responses_missing_blank_counts_not_attempted(tmp_path):
    path = _toy(tmp_path)
    (tmp_path / "w.csv").write_text("person,q1,q2\nn1,1,\nn2,,0\n")
    refused = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "w.csv", "--dataset", "toy")
    assert refused.exit_code == 1 and "w.csv:2 column 'q2': blank cell" in refused.output
    result = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "w.csv", "--dataset", "toy",
                  "--missing", "blank", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["notes"]["blank cells read as not attempted"] == 2


def _psr_toy(tmp_path) -> Path:
    """The toy graph with its Eq. 1 prerequisites (strict rule: 12 edges)."""
    path = _toy(tmp_path)
    assert _run(f"ladybug:{path}", "derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    return path


def _commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def test_every_command_with_a_result_takes_format_table_json_csv():
    """--json is the alias of --format json wherever a command prints a result; ingest items and
    responses, whose --format is the input's, and db export, whose --format is the files', call
    theirs --output-format; the commands that draw a graph also take --format dot."""
    with_json = {}
    for name, command in _commands(cli):
        options = {o: p for p in command.params for o in p.opts}
        if "--json" in options:
            flag = "--output-format" if name in ("ingest items", "ingest responses", "db export") else "--format"
            with_json[name] = (options[flag].name, tuple(options[flag].type.choices), options[flag].default)
    assert {"db stats", "evaluate psr", "kst next-steps", "kst fringe", "query", "derive question-prerequisites",
            "ingest items", "fit prerequisites"} <= set(with_json)
    drawn = {name for name, (_, choices, _) in with_json.items() if "dot" in choices}  # a graph as Graphviz DOT
    assert drawn == {"kst space", "kst analyse", "derive question-prerequisites", "kst depth"}
    assert {with_json[name] for name in drawn} == {("output_format", ("table", "json", "csv", "dot"), "table")}
    assert {with_json[name] for name in set(with_json) - drawn} == {("output_format", ("table", "json", "csv"),
                                                                     "table")}


def test_format_csv_and_json_hold_the_same_values(tmp_path):
    """db stats: one CSV table with a column naming the part of the JSON each row holds (pandas.read_csv reads
    it); evaluate psr: its rows at full precision."""
    import pandas as pd

    graph = f"ladybug:{_psr_toy(tmp_path)}"
    as_json = json.loads(_run(graph, "db", "stats", "--format", "json").stdout)
    text = _run(graph, "db", "stats", "--format", "csv").stdout
    rows = list(csv.DictReader(text.splitlines()))
    assert [r["table"] for r in rows] == ["summary", "frameworks", "datasets"]
    summary, framework, _ = rows
    assert summary["graph"] == as_json["graph"] and summary["nodes.Question"] == "8"
    assert summary["relationships.ANSWERED"] == "11" and summary["framework"] == ""
    assert {k: v for k, v in framework.items() if v} == {"table": "frameworks",
                                                         **{k: str(v) for k, v in as_json["frameworks"][0].items()}}
    assert float(framework["prerequisitesPerConcept"]) == 5 / 6  # not the table's 0.83
    frame = pd.read_csv(io.StringIO(text))
    assert frame.set_index("table").loc["summary", "nodes.Question"] == 8
    psr_json = json.loads(_run(graph, "evaluate", "psr", "--out", tmp_path / "o", "--min-prerequisites", "3",
                               "--json").stdout)
    rows = list(csv.DictReader(_run(graph, "evaluate", "psr", "--out", tmp_path / "o", "--min-prerequisites", "3",
                                    "--format", "csv").stdout.splitlines()))
    assert len(rows) == len(psr_json) == 1 and float(rows[0]["psrMicro"]) == psr_json[0]["psrMicro"] == 0.575
    assert rows[0] == {k: "" if v is None else str(v) for k, v in psr_json[0].items()}


def test_format_csv_of_a_record_with_lists_keeps_them_as_json_text(tmp_path):
    graph = f"ladybug:{_psr_toy(tmp_path)}"
    lines = _run(graph, "kst", "fringe", "--dataset", "toy", "--state", "q1", "--format", "csv").stdout.splitlines()
    assert lines[0] == "dataset,state,fringe,innerFringe,outerFringe"
    fields = next(csv.reader(lines[1:]))
    assert fields[:3] == ["toy", '["toy:q1"]', "standard"] and json.loads(fields[4]) == json.loads(
        _run(graph, "kst", "fringe", "--dataset", "toy", "--state", "q1", "--json").stdout)["outerFringe"]


def test_json_with_another_format_is_a_usage_error(tmp_path):
    result = _run(f"ladybug:{_toy(tmp_path)}", "db", "stats", "--json", "--format", "csv")
    assert result.exit_code == 2 and "--json and --format csv contradict each other" in result.output
    assert CliRunner().invoke(cli, ["--quiet", "--verbose", "db", "stats"]).exit_code == 2


def _lines_within(text: str, width: int) -> bool:
    return all(len(line) <= width for line in text.splitlines())


def test_tables_fit_80_columns_with_every_number_whole(tmp_path):
    """At 80 columns (COLUMNS, as a terminal of that width) the PSR table and the graph statistics
    fit and show their numbers in full: nothing is cut with an ellipsis."""
    graph = f"ladybug:{_psr_toy(tmp_path)}"
    env = {"COLUMNS": "80"}
    psr = CliRunner().invoke(cli, ["--graph", graph, "evaluate", "psr", "--out", str(tmp_path / "o"),
                                   "--min-prerequisites", "3"], env=env)
    assert psr.exit_code == 0 and _lines_within(psr.stdout, 80) and "…" not in psr.stdout
    assert "0.575" in psr.stdout and "0.528" in psr.stdout  # psrMicro 23/40, psrMacro 19/36
    stats = CliRunner().invoke(cli, ["--graph", graph, "db", "stats"], env=env).stdout
    tables = stats.split("\n", 1)[1]  # after the line naming the graph (a path, as long as it is)
    assert _lines_within(tables, 80) and "…" not in tables and "questionPrerequisitesPerQuestion" in tables


def test_render_table_keeps_long_numbers_and_folds_ids():
    """A long run id folds onto a second line; a table too wide even so is transposed, numbers whole."""
    import pandas as pd
    from rich.console import Console

    from kstp.cli.output import render_table

    def shown(frame):
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(render_table(frame, "t", 3, 80))
        text = console.export_text()
        assert _lines_within(text, 80) and "…" not in text
        return text

    run_id = "answers:a-model-with-a-long-name:frcsub:0123456789abcdef"
    text = shown(pd.DataFrame({"runId": [run_id], "count": [123_456_789_012], "psr": [0.5]}))
    cells = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert "".join(cells) == run_id and len(cells) == 2  # folded, not cut
    assert "123456789012" in text and "0.500" in text
    text = shown(pd.DataFrame({f"column {i}": [1_234_567, 7_654_321] for i in range(12)}))
    assert [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")][0] == "column 0"
    assert text.count("1234567") == 12 and text.count("7654321") == 12


def test_progress_bar_outside_a_terminal_prints_a_line_per_5_percent(capsys):
    from kstp.cli.output import progress_bar

    with progress_bar("m on toy") as update:
        for done in range(1, 41):
            update(done, 40)
    lines = capsys.readouterr().err.splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines] == [f"m on toy: {2 * i}/40 ({5 * i}%)" for i in range(1, 21)]
    assert all(re.fullmatch(r".*, \d+\.\d s", line) for line in lines)


def test_steps_print_timed_lines_outside_a_terminal_and_quiet_drops_them(tmp_path):
    path = _toy(tmp_path)
    (tmp_path / "more.csv").write_text("learner,item,correct\nL4,q1,1\n")
    args = ["ingest", "responses", tmp_path / "more.csv", "--dataset", "toy", "--json"]
    result = _run(f"ladybug:{path}", *args)
    assert re.search(r"^reading more.csv \(long\): done in \d+\.\d s$", result.stderr, re.MULTILINE)
    assert re.search(r"^writing 1 answers: done in \d+\.\d s$", result.stderr, re.MULTILINE)
    quiet = CliRunner().invoke(cli, ["--quiet", "--graph", f"ladybug:{path}", *map(str, args)])
    assert quiet.exit_code == 0 and quiet.stderr == "" and "written" in json.loads(quiet.stdout)


def _interrupt(monkeypatch, target: str) -> None:
    """Ctrl-C arrives while ``target`` (module.attribute) runs."""
    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    module, name = target.rsplit(".", 1)
    monkeypatch.setattr(__import__(module, fromlist=[name]), name, pressed)


def test_interrupted_space_sample_says_no_state_was_stored(tmp_path, monkeypatch):
    graph = f"ladybug:{_psr_toy(tmp_path)}"
    _interrupt(monkeypatch, "kstp.graph.structures.dataset_space")
    stored = _run(graph, "kst", "space", "--dataset", "toy", "--sample", "5", "--store")
    assert stored.exit_code == 130
    assert stored.stderr.splitlines()[-1] == ("Interrupted: no state was stored (states are stored once all are "
                                              "drawn or listed); run the same command again.")
    read = _run(graph, "kst", "space", "--dataset", "toy", "--sample", "5")
    assert read.exit_code == 130
    assert read.stderr.splitlines()[-1] == "Interrupted: nothing was written to the graph (the command only reads it)."


def test_interrupted_fit_prerequisites_says_no_pair_was_written(tmp_path, monkeypatch):
    graph = f"ladybug:{_psr_toy(tmp_path)}"
    _interrupt(monkeypatch, "kstp.evaluators.prerequisites.learn_prerequisites")
    result = _run(graph, "fit", "prerequisites", "--dataset", "toy")
    assert result.exit_code == 130 and result.stderr.splitlines()[-1].startswith(
        "Interrupted: the learned pairs are written once the search has ended, so an interrupted search wrote none")
    assert _run(graph, "fit", "prerequisites", "--dataset", "toy", "--no-write").stderr.splitlines()[-1] == \
        "Interrupted: nothing was written (--no-write)."


def test_interrupted_demo_names_its_step_and_what_is_in_the_graph(tmp_path, monkeypatch, data_root):
    _interrupt(monkeypatch, "kstp.graph.structures.derive_question_prerequisites")
    result = _run(f"ladybug:{tmp_path / 'graph'}", "demo", "--data", data_root, "--out", tmp_path / "out")
    assert result.exit_code == 130
    assert re.search(r"^\[2/9\] LLM-KST question annotation map \(xes3g5m\): done in \d+\.\d s$", result.stderr,
                     re.MULTILINE)
    assert result.stderr.splitlines()[-1] == (
        "Interrupted: in step 3/9 (Eq. 1 on xes3g5m (strict)); steps 1-2 are in the graph; run kstp demo again "
        "to finish (steps already done change nothing).")


def test_render_table_keeps_the_words_of_most_cells_whole():
    """`kstp query --list` at 80 columns cut query names mid-word (concept_ex|amples) to keep one long word of
    another column whole: a column is widened where that keeps most cells whole per character."""
    import pandas as pd
    from rich.console import Console

    from kstp.cli.output import render_table

    names = ["concept_examples", "blim_item_parameters", "dataset_learner_figures", "learned_prerequisites"] * 5
    names.append("dataset_learner_figures_with_long_name")  # 38 characters: folded, or no other name is whole
    frame = pd.DataFrame({"name": names, "area": "annotation", "params": "$framework: string",
                          "returns": ["questionId, closenessAuc, runId"] * 20 + ["perfectReasoningRate, runId"]})
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(render_table(frame, "t", 3, 80))
    text = console.export_text()
    first = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert _lines_within(text, 80) and [cell for cell in first if cell][:20] == names[:20]  # each on one line


def test_format_csv_of_several_parts_writes_negative_numbers_and_text_once_neutralised():
    """A record with lists of records (fit slm: summary, items, states) had every cell neutralised twice: a
    log-likelihood of -2916.0 came out as '-2916.0 (text to pandas and spreadsheets), '=1 as ''=1."""
    import pandas as pd

    from kstp.cli.output import to_csv
    from kstp.csvcells import restore

    text = to_csv({"logLikelihood": -2916.5, "rows": [{"x": -2.0, "id": "=1"}]})
    assert text == "table,logLikelihood,x,id\nsummary,-2916.5,,\nrows,,-2.0,'=1\n"
    frame = pd.read_csv(io.StringIO(text))
    assert frame.loc[0, "logLikelihood"] == -2916.5 and restore(frame.loc[1, "id"]) == "=1"
    kst = Path(__file__).resolve().parents[1] / "data" / "kst" / "kstio"
    result = CliRunner().invoke(cli, ["fit", "slm", "--responses", str(kst / "DoignonFalmagne7.dat"),
                                      "--structure", str(kst / "DoignonFalmagne7.spc"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(io.StringIO(result.stdout)).set_index("table").loc["summary"]
    assert float(summary["logLikelihood"]) == pytest.approx(-2916.0082285, abs=1e-6)
