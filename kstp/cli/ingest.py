"""``kstp ingest``: curricula, items and learner logs into the graph.

Each file is read and validated whole before anything is written; a refused file
leaves the graph as it was. Re-running an ingest reports every row unchanged.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kstp.cli.output import emit, format_option, get_store, json_option, message, print_table, status
from kstp.errors import InputError

if TYPE_CHECKING:
    from kstp.loaders.common import LoadReport

__all__ = ["ingest"]

ITEM_FORMATS = ("auto", "csv", "math2015", "concept-map", "jsonl", "parquet", "arrow", "hf")
#: The formats read as records through a field map (kstp.loaders.records.RECORD_FORMATS, less jsonl, whose native
#: items carry concepts).
_RECORDS = ("parquet", "arrow", "hf")
#: Answer formats and blank-cell policies (kstp.loaders.responses.FORMATS, MISSING; named here so --help
#: imports no loader).
_RESPONSE_FORMATS = ("wide", "long", "pykt")
_MISSING = ("refuse", "blank")


def _report(report: LoadReport, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        emit(report.as_dict())
        return
    rows = [{"kind": k, **vars(v)} for k, v in report.written.items()]
    print_table(pd.DataFrame(rows, columns=["kind", "created", "updated", "unchanged"]), f"Ingested {report.source}")
    for note, value in report.notes.items():
        message(f"{note}: {', '.join(value) if isinstance(value, list) else value}")


@click.group()
def ingest() -> None:
    """Load curricula, items and learner logs into the graph."""


@ingest.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--edges", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Prerequisite edges CSV (from_id,to_id; from is the prerequisite of to) for a concepts CSV.")
@click.option("--framework", help="Framework id; concept ids become FRAMEWORK:id. "
              "Default: ccss for the Coherence Map JSON, the file stem for a CSV.")
@json_option
@click.pass_context
def standards(ctx, path: Path, edges: Path | None, framework: str | None, as_json: bool) -> None:
    """Load a curriculum: a Coherence Map JSON, or a concepts CSV with an edges CSV.

    The concepts CSV has columns id, code, description and optionally grade and
    cluster. A prerequisite cycle, a self-loop or an unknown id is refused with
    its location; repeated edges are collapsed and counted.

    \b
    Examples:
      kstp ingest standards ../shared/data/standards/nys_concepts.json
      kstp ingest standards concepts.csv --edges edges.csv --framework algebra1
    """
    from kstp.loaders.standards import load_standards

    with status(f"ingesting {path.name}"):
        report = load_standards(get_store(ctx), path, edges, framework)
    _report(report, as_json)


def _item_format(path: Path, chosen: str) -> str:
    if chosen != "auto":
        return chosen
    if path.is_dir():
        from kstp.loaders.records import record_format

        return "hf" if record_format(path) == "hf" else "math2015"
    return {".json": "concept-map", ".jsonl": "jsonl", ".parquet": "parquet", ".arrow": "arrow"}.get(
        path.suffix.lower(), "csv")


@ingest.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dataset", required=True, help="Dataset id; question ids become DATASET:id.")
@click.option("--format", "fmt", type=click.Choice(ITEM_FORMATS), default="auto", show_default=True,
              help="auto: a Hugging Face datasets folder (save_to_disk, or Parquet files of a hub download) is hf, "
              "another folder math2015, .json a question->concept map, .jsonl JSON lines, .parquet Parquet, "
              ".arrow Arrow, else CSV.")
@click.option("--qmatrix", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Q-matrix CSV (item id, then one 0/1 column per skill) for an items CSV.")
@click.option("--skills", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Skills CSV (skill, description) naming the Q-matrix columns.")
@click.option("--framework", help="Framework whose concept ids a concept map or JSONL refers to (e.g. ccss).")
@click.option("--id-column", "--id-field", "id_column",
              help="Item id column of a CSV, or field of records (default: item_id, id or question_id; records "
              "without one are numbered from 1).")
@click.option("--text-column", "--text-field", "text_column",
              help="Question text column or field (default: text, question, expression or problem; records also "
              "input, prompt).")
@click.option("--answer-column", "--answer-field", "answer_column",
              help="Gold answer column or field (default: answer, correct_answer, computed_answer, "
              "correct_answer_note; records also target, solution, label, output).")
@click.option("--options-field", help="Field of records holding the options (a list, or letter -> text): written "
              "under the text as 'A. ...' lines; an integer gold is then the right option's index.")
@click.option("--answer-regex", help="Take the gold from the answer field's text by this regular expression "
              "(its first group), e.g. '####\\s*(.+)$' for GSM8K's solutions.")
@click.option("--split", help="The split of a datasets folder that holds several (test, train, ...).")
@format_option("--output-format")  # --format is the input's format here
@click.pass_context
def items(ctx, path: Path, dataset: str, fmt: str, qmatrix, skills, framework, id_column, text_column,
          answer_column, options_field, answer_regex, split, as_json: bool) -> None:
    """Load questions with their text, answer and concepts.

    A Q-matrix turns its skill columns into concepts of a framework named after the
    dataset (a skill map). A concept map or JSONL refers to concepts of a framework
    already in the graph (--framework). Records for a model run (JSON lines, Parquet,
    Arrow, or a Hugging Face datasets folder, as `datasets` saved or downloaded it; read
    with pyarrow, nothing downloaded) are read through a field map (--text-field,
    --answer-field, --options-field, --id-field), JSON lines whenever one is given.

    \b
    Examples:
      kstp ingest items items.csv --dataset frcsub --qmatrix qmatrix.csv --skills skills.csv
      kstp ingest items ../shared/data/llm_kst/xes_skills_nys.json --dataset xes3g5m --framework ccss
      kstp ingest items ../shared/data/responses/math2015/Math1 --dataset math1
      kstp ingest items gsm8k/ --dataset gsm8k --split test --answer-regex '####\\s*(.+)$'
      kstp ingest items mmlu.jsonl --dataset mmlu --text-field question --options-field choices \\
          --answer-field answer
    """
    from kstp.loaders import items as items_loader

    fmt = _item_format(path, fmt)
    records = fmt in _RECORDS or (fmt == "jsonl" and any((id_column, text_column, answer_column, options_field,
                                                           answer_regex)))
    if (options_field or answer_regex or split) and not records:
        raise click.UsageError(f"--options-field, --answer-regex and --split go with records (JSON lines, Parquet, "
                               f"Arrow, a datasets folder); {path.name} reads as {fmt}")
    if records:
        from kstp.loaders.records import FieldMap, read_question_records

        fields = FieldMap(id_column, text_column, answer_column, options_field, answer_regex)
        with status(f"reading {path.name}"):
            item_set = read_question_records(path, dataset, fields, fmt, split)
        with status(f"writing {len(item_set.questions)} questions"):
            report = items_loader.write_items(get_store(ctx), item_set)
        _report(report, as_json)
        return
    store = get_store(ctx)
    if fmt == "concept-map" and framework is None:
        raise click.UsageError("a concept map needs --framework (the framework its concept ids belong to)")
    if (qmatrix or skills) and fmt != "csv":
        raise click.UsageError("--qmatrix and --skills go with an items CSV")
    known = items_loader.framework_concepts(store, framework) if framework else set()
    if framework and not known:
        raise InputError(f"framework {framework!r} has no concepts in the graph; ingest the standards first")
    with status(f"reading {path.name}"):
        if fmt == "csv":
            item_set = items_loader.read_items_csv(path, dataset, qmatrix, skills, id_column, text_column,
                                                   answer_column)
        elif fmt == "math2015":
            item_set = items_loader.read_math2015(path, dataset)
        elif fmt == "concept-map":
            item_set = items_loader.read_concept_map(path, dataset, framework, known)
        else:
            item_set = items_loader.read_items_jsonl(path, dataset, framework, known)
    with status(f"writing {len(item_set.questions)} questions"):
        report = items_loader.write_items(store, item_set)
    _report(report, as_json)


def _response_format(path: Path, chosen: str) -> str:
    from kstp.loaders.common import read_header

    if chosen != "auto":
        return chosen
    columns = read_header(path)
    if {"uid", "questions", "responses"} <= set(columns):
        return "pykt"
    if {"correct", "response", "score"} & set(columns):
        return "long"
    return "wide"


@ingest.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset whose questions were answered (ingest its items first).")
@click.option("--format", "fmt", type=click.Choice(("auto", *_RESPONSE_FORMATS)), default="auto",
              show_default=True, help="auto: uid/questions/responses columns mean pykt, a correct column "
              "means long, else a wide person x item matrix.")
@click.option("--missing", type=click.Choice(_MISSING), default="refuse", show_default=True,
              help="A blank cell of a wide matrix: refuse the file (with its line), or read it as not attempted "
              "(counted in the report).")
@click.option("--strict", is_flag=True, help="Refuse a wide matrix without a column for every question of the "
              "dataset (by default the report names them).")
@click.option("--unknown-items", type=click.Choice(("refuse", "skip")), default=None,
              help="An answer (long, pykt) to a question the dataset does not have: refuse the file with its line, "
              "or skip the answer, counted in the report. Default: skip for pykt (XES3G5M's logs name questions "
              "the released dataset lacks; paper 1's release skips those records), refuse otherwise.")
@format_option("--output-format")  # --format is the input's format here
@click.pass_context
def responses(ctx, path: Path, dataset: str, fmt: str, missing: str, strict: bool, unknown_items: str | None,
              as_json: bool) -> None:
    """Load learner answers: a wide 0/1 matrix, a long CSV, or a pyKT sequence CSV.

    Learners become Learner {kind: human} nodes with ids DATASET:id; each answer an
    ANSWERED {correct} edge. A learner answering a question twice keeps one answer: in
    a long log with a time column (timestamp, time, date, submitted_at, ...; ISO 8601
    date-times or epoch numbers) the latest by time, otherwise the last row. The
    report's note says which.

    \b
    Examples:
      kstp ingest responses responses.csv --dataset frcsub
      kstp ingest responses train_valid_sequences_quelevel.csv --dataset xes3g5m --format pykt
    """
    from kstp.loaders import responses as responses_loader

    store = get_store(ctx)
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    if not known:
        raise InputError(f"dataset {dataset!r} has no questions in the graph; ingest its items first")
    fmt = _response_format(path, fmt)
    if strict and fmt != "wide":
        raise click.UsageError(f"--strict goes with a wide matrix; {path.name} reads as {fmt}")
    unknown = unknown_items or ("skip" if fmt == "pykt" else "refuse")
    if unknown_items and fmt == "wide":
        raise click.UsageError(f"--unknown-items goes with a long or pykt log; {path.name} reads as wide")
    reader = {"wide": functools.partial(responses_loader.read_wide, missing=missing, strict=strict),
              "long": functools.partial(responses_loader.read_long, unknown=unknown),
              "pykt": functools.partial(responses_loader.read_pykt, unknown=unknown)}[fmt]
    with status(f"reading {path.name} ({fmt})"):
        answers = reader(path, known)
    with status(f"writing {len(answers)} answers"):
        report = responses_loader.write_answers(store, dataset, answers, path.name)
    if fmt == "wide" and missing == "blank":
        report.notes["blank cells read as not attempted"] = answers.attrs["notAttempted"]
    if fmt == "wide" and answers.attrs["itemsWithoutColumn"]:
        report.notes["questions of the dataset without a column"] = answers.attrs["itemsWithoutColumn"]
    if answers.attrs.get("skippedAnswers"):
        report.notes["answers to questions outside the dataset, skipped"] = answers.attrs["skippedAnswers"]
        report.notes["distinct questions outside the dataset"] = answers.attrs["skippedItems"]
    _report(report, as_json)
