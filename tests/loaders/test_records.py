"""Questions from records: JSON lines through a field map, Parquet files of a hub download, a folder that
``datasets``' save_to_disk wrote, an Arrow file; all written here with pyarrow (no ``datasets``, no download)
in the layouts those tools leave on disk."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError, InputError
from kstp.graph.factory import open_store
from kstp.loaders.records import FieldMap, read_question_records, record_format
from tests.endpoint import FakeEndpoint

GSM8K = {"test": [{"question": "Tom has 3 apples and buys 4. How many?", "answer": "3 + 4 = 7\n#### 7"},
                  {"question": "Half of 10?", "answer": "10 / 2 = 5\n#### 5"}],
         "train": [{"question": "1 + 1?", "answer": "#### 2"}]}


def _hub_download(folder):
    """gsm8k as `huggingface-cli download` leaves it: main/<split>-00000-of-00001.parquet."""
    (folder / "main").mkdir(parents=True)
    for split, rows in GSM8K.items():
        pq.write_table(pa.Table.from_pylist(rows), folder / "main" / f"{split}-00000-of-00001.parquet")
    return folder


def _saved_to_disk(folder):
    """A DatasetDict.save_to_disk folder: dataset_dict.json, one folder per split with state.json and an Arrow
    stream (datasets writes the IPC stream format)."""
    folder.mkdir()
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": list(GSM8K)}))
    for split, rows in GSM8K.items():
        (folder / split).mkdir()
        table = pa.Table.from_pylist(rows)
        with pa.OSFile(str(folder / split / "data-00000-of-00001.arrow"), "wb") as sink, \
                pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        (folder / split / "state.json").write_text(json.dumps({"_data_files": [
            {"filename": "data-00000-of-00001.arrow"}], "_split": split}))
        (folder / split / "dataset_info.json").write_text("{}")
    return folder


@pytest.mark.parametrize("layout", [_hub_download, _saved_to_disk])
def test_a_datasets_folder_is_read_by_split_with_the_gold_taken_by_a_regex(tmp_path, layout):
    folder = layout(tmp_path / "gsm8k")
    assert record_format(folder) == "hf"
    items = read_question_records(folder, "gsm8k", FieldMap(answer_regex=r"####\s*(.+)$"), split="test")
    assert items.questions[["id", "text", "answer", "position"]].values.tolist() == [
        ["gsm8k:1", GSM8K["test"][0]["question"], "7", 1], ["gsm8k:2", "Half of 10?", "5", 2]]
    with pytest.raises(ConfigError, match="holds the splits test, train; choose one with --split"):
        read_question_records(folder, "gsm8k")
    with pytest.raises(ConfigError, match="has no split 'dev'"):
        read_question_records(folder, "gsm8k", split="dev")


def test_jsonl_and_arrow_through_a_field_map_with_options(tmp_path):
    rows = [{"uid": "a1", "meta": {"q": "Which is prime?"}, "choices": ["4", "6", "7"], "label": 2},
            {"uid": "a2", "meta": {"q": "Largest?"}, "choices": {"A": "1", "B": "9"}, "label": "B"}]
    (tmp_path / "mc.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pa.OSFile(str(tmp_path / "mc.arrow"), "wb") as sink, \
            pa.ipc.new_file(sink, pa.Table.from_pylist(rows[:1]).schema) as writer:  # the IPC file format
        writer.write_table(pa.Table.from_pylist(rows[:1]))
    fields = FieldMap(id="uid", text="meta.q", answer="label", options="choices")
    items = read_question_records(tmp_path / "mc.jsonl", "mc", fields)
    assert items.questions[["id", "text", "answer"]].values.tolist() == [
        ["mc:a1", "Which is prime?\nA. 4\nB. 6\nC. 7", "C"], ["mc:a2", "Largest?\nA. 1\nB. 9", "B"]]
    assert not items.defines_concepts and items.assesses.empty
    arrow = read_question_records(tmp_path / "mc.arrow", "mc", fields)
    assert arrow.questions["text"].tolist() == ["Which is prime?\nA. 4\nB. 6\nC. 7"]
    with pytest.raises(InputError, match="no record has the text field 'stem'; the fields are: uid, meta, choices"):
        read_question_records(tmp_path / "mc.jsonl", "mc", FieldMap(text="stem"))
    (tmp_path / "twice.jsonl").write_text('{"id": 1, "question": "a", "answer": 1}\n' * 2)
    with pytest.raises(InputError, match="twice.jsonl:2: id '1' repeats record 1"):
        read_question_records(tmp_path / "twice.jsonl", "t")


@pytest.mark.parametrize(("record", "message"), [
    ({"q": "Which?", "choices": ["4", "7"], "label": "C"}, "must be one of its letters A, B, not \"C\""),
    ({"q": "Which?", "choices": ["4"], "label": 0}, '"choices" must name the letters A, B, ... in order, two or more'),
    ({"q": "Which?", "choices": {"B": "4", "C": "7"}, "label": "B"}, "found B, C"),
    ({"q": "Which?\nA. 4\nB. 7", "choices": ["4", "7"], "label": 1}, "the text already lists options"),
    ({"q": "Which?", "choices": "4 or 7", "label": "A"}, '"choices" must be a list of option texts'),
    ({"q": "Which?", "choices": ["4", "7"], "label": 5}, "not \"5\""),
    ({"q": "Which?", "choices": [str(n) for n in range(30)], "label": 27},  # was IndexError on LETTERS[27]
     '"choices" has 30 options; a multiple-choice item has at most 10 (A-J)$'),
    ({"q": "Which?", "choices": {chr(65 + n): str(n) for n in range(11)}, "label": 10}, "has 11 options"),
    ({"q": None, "choices": ["4", "7"], "label": 1}, 'needs its problem text, read from "q"$'),
])
def test_record_options_are_checked_as_the_items_loader_checks_them(tmp_path, record, message):
    """The cases a new user found ingested silently with --options-field (a gold letter no option has: every
    reply graded wrong); an index past the options is no letter either. An empty options list (or null) is an open
    question among multiple-choice ones (record 1: a list column of Arrow or Parquet has no other way to say so)."""
    (tmp_path / "bad.jsonl").write_text('{"q": "1 + 1?", "choices": [], "label": "2"}\n' + json.dumps(record) + "\n")
    with pytest.raises(InputError, match="bad.jsonl:2: .*" + message.replace("(", "\\(").replace(")", "\\)")):
        read_question_records(tmp_path / "bad.jsonl", "b", FieldMap(text="q", answer="label", options="choices"))


def test_ingest_mmlu_records_with_statement_lists(graph_location, tmp_path):
    """The README's MMLU ingest: a question listing statements I., II., III. is stored whole with its options
    under it (the I. line was once taken for an option and stopped the ingest at the first such record)."""
    question = "Which must be true?\nI. f is continuous\nII. f is bounded\nIII. f is differentiable"
    rows = [{"question": question, "choices": ["I only", "II only", "I and II", "I, II and III"], "answer": 2},
            {"question": "2 + 2?", "choices": ["3", "4"], "answer": 1}]
    (tmp_path / "mmlu.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(cli, ["--graph", graph_location, "ingest", "items", str(tmp_path / "mmlu.jsonl"),
                                      "--dataset", "mmlu", "--text-field", "question", "--options-field", "choices",
                                      "--answer-field", "answer", "--output-format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["written"]["Question"]["created"] == 2
    with open_store(graph_location) as store:
        stored = store.nodes("Question", ["mmlu:1", "mmlu:2"]).set_index("id")
    assert stored.loc["mmlu:1", "text"] == question + "\nA. I only\nB. II only\nC. I and II\nD. I, II and III"
    assert stored.loc["mmlu:1", "answer"] == "C" and stored.loc["mmlu:2", "answer"] == "B"


def test_ingest_a_hub_download_and_a_model_answers_it(graph_location, tmp_path):
    folder = _hub_download(tmp_path / "gsm8k")
    runner = CliRunner()
    ingested = runner.invoke(cli, ["--graph", graph_location, "ingest", "items", str(folder), "--dataset", "gsm8k",
                                   "--split", "test", "--answer-regex", r"####\s*(.+)$", "--output-format", "json"])
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)["written"]["Question"]["created"] == 2
    with FakeEndpoint(answer="So \\boxed{7}.") as server:
        result = runner.invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "gsm8k",
                                     "--model", "m", "--base-url", server.base_url, "--json"])
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["questions"], json.loads(result.stdout)["accuracy"]) == (2, 0.5)
    with open_store(graph_location) as store:
        assert store.nodes("Question", ["gsm8k:1"]).iloc[0]["answer"] == "7"
    (tmp_path / "items.csv").write_text("id,text,answer\nq1,2 + 2?,4\n")
    refused = runner.invoke(cli, ["--graph", graph_location, "ingest", "items", str(tmp_path / "items.csv"),
                                  "--dataset", "x", "--split", "test"])
    assert refused.exit_code == 2 and "--split go with records" in refused.output
