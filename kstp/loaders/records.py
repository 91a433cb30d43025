"""Questions from records: JSON lines with a field map, Parquet, Arrow, and local Hugging Face ``datasets`` folders.

What an LLM-evaluation engineer has on disk after ``datasets`` (or ``huggingface-cli
download``) fetched a benchmark, read without the ``datasets`` package and without any
download, with pyarrow alone:

- a JSON lines file (``.jsonl``), one record per line;
- a Parquet file (``.parquet``), or a folder of them (a hub snapshot: ``main/test-00000-of-00001.parquet``),
  of which the files of one split are read (their name or folder is the split);
- an Arrow file (``.arrow``, the IPC stream ``datasets`` writes, or the IPC file format);
- a folder written by ``Dataset.save_to_disk`` (``state.json`` naming its ``.arrow`` files)
  or ``DatasetDict.save_to_disk`` (``dataset_dict.json``, a folder per split).

A field map says which field is the question's id (default: ``id``, else the record's
position, 1-based), its text (``question``, ``text``, ``problem``, ``input``), its gold
answer (``answer``, ``target``, ``solution``, ``label``) and its options (none by default).
Options (a list, or a mapping letter -> text) are written under the text as lines
``A. ...``, which is how kstp's grader and the ``{options}`` placeholder of a prompt file
find them; an integer gold with options is the index of the right option (MMLU's
``answer: 2`` is ``C``). ``answer_regex`` takes the gold from the answer field's text
(GSM8K's solutions end ``#### 72``: ``####\\s*(.+)$``). The items assess no concept:
they are for model runs (``evaluate answers``), not PSR, until concepts are linked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kstp.errors import ConfigError, InputError
from kstp.loaders.common import json_lines, read_text, require_file
from kstp.loaders.items import LETTERS, ItemSet, _questions, mcq_text, option_lines

__all__ = ["FieldMap", "RECORD_FORMATS", "record_format", "read_records", "option_lines", "read_question_records"]

#: The formats :func:`read_records` reads (``hf``: a ``datasets`` folder, or a folder of Parquet files).
RECORD_FORMATS = ("jsonl", "parquet", "arrow", "hf")

_ID_FIELDS = ("id", "question_id", "idx", "uid")
_TEXT_FIELDS = ("question", "text", "problem", "input", "prompt")
_ANSWER_FIELDS = ("answer", "target", "solution", "label", "output")


@dataclass(frozen=True)
class FieldMap:
    """Which field of a record is what (None: found by name, see the module docstring).

    Attributes
    ----------
    id, text, answer, options : str or None
        Field names; a dotted name reaches into a nested record (``meta.id``).
    answer_regex : str or None
        A regular expression whose first group (else whole match) is the gold answer, searched
        in the answer field's text.
    """

    id: str | None = None
    text: str | None = None
    answer: str | None = None
    options: str | None = None
    answer_regex: str | None = None


def record_format(path: Path) -> str | None:
    """The format of ``path`` by its suffix or its folder's files, or None when it is none of :data:`RECORD_FORMATS`.

    >>> record_format(Path("test.parquet")), record_format(Path("gsm8k.jsonl")), record_format(Path("x.csv"))
    ('parquet', 'jsonl', None)
    """
    if path.is_dir():
        marked = any((path / name).exists() for name in ("dataset_dict.json", "state.json", "dataset_info.json"))
        return "hf" if marked or any(path.rglob("*.parquet")) or any(path.rglob("*.arrow")) else None
    return {".jsonl": "jsonl", ".parquet": "parquet", ".arrow": "arrow"}.get(path.suffix.lower())


def _arrow(path: Path) -> pd.DataFrame:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_stream(source).read_all().to_pandas()
    except pa.ArrowInvalid:
        try:
            with pa.memory_map(str(path)) as source:
                return pa.ipc.open_file(source).read_all().to_pandas()
        except pa.ArrowInvalid as exc:
            raise InputError(f"{path}: not an Arrow file ({exc})") from None


def _parquet(path: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pandas()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{path}: not a Parquet file ({exc})") from None


def _jsonl(path: Path) -> list[dict]:
    records = []
    for number, record in json_lines(path):
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}: each line needs a JSON object")
        records.append(record)
    return records


def _split_files(folder: Path, split: str | None, suffix: str) -> list[Path]:
    """The files of one split in a folder: the split names the file (``test-00000-of-00001``) or its folder."""
    files = sorted(folder.rglob(f"*{suffix}"))
    splits = sorted({_split_of(f, folder) for f in files} - {None})
    if split is None:
        if len(splits) > 1:
            raise ConfigError(f"{folder} holds the splits {', '.join(splits)}; choose one with --split")
        return files
    chosen = [f for f in files if _split_of(f, folder) == split]
    if not chosen:
        raise ConfigError(f"{folder} has no split {split!r}; it has: {', '.join(splits) or 'one unnamed split'}")
    return chosen


def _split_of(path: Path, folder: Path) -> str | None:
    """A file's split: its name's stem in a hub file (``test-00000-of-00001.parquet``), else its folder's name.

    >>> root = Path("gsm8k")
    >>> _split_of(root / "main" / "test-00000-of-00001.parquet", root), _split_of(root / "dev" / "x.parquet", root)
    ('test', 'dev')
    >>> _split_of(root / "test" / "data-00000-of-00001.arrow", root), _split_of(root / "x.parquet", root)
    ('test', None)
    """
    hub = re.fullmatch(r"(\w+?)-\d+-of-\d+\.\w+", path.name)
    if hub and hub.group(1) != "data":
        return hub.group(1)
    return path.parent.name if path.parent != folder else None


def _hf_folder(folder: Path, split: str | None) -> tuple[pd.DataFrame, str]:
    """A ``datasets`` folder (``save_to_disk``) or a folder of Parquet / Arrow files, one split of it."""
    if (folder / "dataset_dict.json").exists():
        splits = json.loads(read_text(folder / "dataset_dict.json")).get("splits", [])
        if split is None:
            if len(splits) != 1:
                raise ConfigError(f"{folder} holds the splits {', '.join(splits)}; choose one with --split")
            split = splits[0]
        if split not in splits:
            raise ConfigError(f"{folder} has no split {split!r}; it has: {', '.join(splits)}")
        frame, _ = _hf_folder(folder / split, None)
        return frame, f"{folder.name}/{split}"
    if (folder / "state.json").exists():
        state = json.loads(read_text(folder / "state.json"))
        files = [folder / f["filename"] for f in state.get("_data_files", [])]
        return pd.concat([_arrow(f) for f in files], ignore_index=True), folder.name
    suffix = ".parquet" if any(folder.rglob("*.parquet")) else ".arrow"
    files = _split_files(folder, split, suffix)
    if not files:
        raise InputError(f"{folder}: no .parquet or .arrow files, and no dataset_dict.json or state.json")
    read = _parquet if suffix == ".parquet" else _arrow
    return pd.concat([read(f) for f in files], ignore_index=True), folder.name + (f"/{split}" if split else "")


def read_records(path: str | Path, fmt: str | None = None, split: str | None = None) -> tuple[list[dict], str]:
    """The records of a JSON lines, Parquet or Arrow file or a ``datasets`` folder, and a source label.

    Parameters
    ----------
    path : path
    fmt : str, optional
        One of :data:`RECORD_FORMATS` (default: :func:`record_format` of ``path``).
    split : str, optional
        The split of a folder that holds several (``test``, ``train``, ...).

    Raises
    ------
    DataNotFoundError
        When ``path`` does not exist.
    InputError
        When it cannot be read in that format (the message names it and the line).
    ConfigError
        On a folder of several splits without ``split``, or an unknown split (naming those there are).
    """
    path = require_file(path)
    fmt = fmt or record_format(path)
    if fmt == "jsonl":
        return _jsonl(path), path.name
    if fmt == "parquet" and path.is_file():
        frame, source = _parquet(path), path.name
    elif fmt == "arrow" and path.is_file():
        frame, source = _arrow(path), path.name
    elif path.is_dir():
        frame, source = _hf_folder(path, split)
    else:
        raise InputError(f"{path}: not a JSON lines, Parquet or Arrow file, nor a datasets folder")
    records = frame.to_dict("records")
    return [{k: _plain(v) for k, v in r.items()} for r in records], source


def _plain(value):
    """A value from Arrow as plain Python: arrays as lists, numpy scalars as numbers."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def _field(record: dict, name: str):
    value = record
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _pick(records: list[dict], chosen: str | None, candidates: tuple[str, ...], what: str, source: str,
          required: bool = True) -> str | None:
    fields = list(dict.fromkeys(k for r in records[:50] for k in r))
    if chosen:
        if all(_field(r, chosen) is None for r in records):
            raise InputError(f"{source}: no record has the {what} field {chosen!r}; the fields are: "
                             f"{', '.join(fields)}")
        return chosen
    found = next((c for c in candidates if c in fields), None)
    if found is None and required:
        raise InputError(f"{source}: no {what} field among {', '.join(fields)}; name it with --{what}-field")
    return found


def _lettered(options, field: str, where: str) -> dict:
    """A record's options as letter -> text: a list (MMLU's ``choices``) lettered A, B, ... in order, or a
    mapping as it is (:func:`~kstp.loaders.items.mcq_text` checks its letters)."""
    if isinstance(options, list | tuple) or hasattr(options, "tolist"):  # Parquet and Arrow give arrays
        options = list(options.tolist() if hasattr(options, "tolist") else options)
    if isinstance(options, dict | list) and len(options) > len(LETTERS):
        raise InputError(f"{where}: \"{field}\" has {len(options)} options; a multiple-choice item has at most "
                         f"{len(LETTERS)} ({LETTERS[0]}-{LETTERS[-1]})")
    if isinstance(options, dict):
        return options
    if isinstance(options, list):
        return dict(zip(LETTERS, options, strict=False))  # len(options) <= len(LETTERS), checked above
    raise InputError(f"{where}: \"{field}\" must be a list of option texts or an object mapping A, B, ... to them, "
                     f"not {type(options).__name__} {json.dumps(options, default=str)[:60]}")


def _gold(value, options, pattern: re.Pattern | None, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and options is not None and \
            float(value).is_integer() and 0 <= int(value) < len(options):
        return LETTERS[int(value)]  # the index of the right option
    text = str(value)
    if pattern is not None:
        found = pattern.search(text)
        if found is None:
            raise InputError(f"{where}: the answer {text[:60]!r} has no match of --answer-regex {pattern.pattern!r}")
        text = found.group(1) if found.groups() else found.group(0)
    return text.strip()


def read_question_records(path: str | Path, dataset: str, fields: FieldMap | None = None, fmt: str | None = None,
                          split: str | None = None) -> ItemSet:
    """Questions of ``dataset`` from records (:func:`read_records`) through a field map.

    Parameters
    ----------
    path : path
        A JSON lines, Parquet or Arrow file, or a ``datasets`` folder.
    dataset : str
        The dataset id; question ids become ``<dataset>:<id>``.
    fields : FieldMap, optional
        Which field is the id, text, answer and options (default: found by name).
    fmt, split : str, optional
        As for :func:`read_records`.

    Returns
    -------
    ItemSet
        Questions with text (options as ``A. ...`` lines under it) and gold answer, in
        record order; no concept links (``defines_concepts`` false: stored links stay).

    Raises
    ------
    InputError
        On a missing field, a repeated or empty id, a gold the regex does not match, no records.
    ConfigError
        On an invalid ``answer_regex``, or a split that is not there.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "mmlu.jsonl").write_text('{"q": "2 + 2?", "choices": ["3", "4"], "answer": 1}\\n')
    >>> items = read_question_records(folder / "mmlu.jsonl", "mmlu", FieldMap(text="q", options="choices"))
    >>> items.questions[["id", "text", "answer"]].values.tolist()
    [['mmlu:1', '2 + 2?\\nA. 3\\nB. 4', 'B']]
    """
    fields = fields or FieldMap()
    records, source = read_records(path, fmt, split)
    if not records:
        raise InputError(f"{source}: no records: nothing to ingest")
    try:
        pattern = re.compile(fields.answer_regex, re.M) if fields.answer_regex else None
    except re.error as exc:
        raise ConfigError(f"--answer-regex {fields.answer_regex!r} is not a regular expression ({exc})") from None
    id_field = _pick(records, fields.id, _ID_FIELDS, "id", source, required=False)
    text_field = _pick(records, fields.text, _TEXT_FIELDS, "text", source)
    answer_field = _pick(records, fields.answer, _ANSWER_FIELDS, "answer", source)
    options_field = _pick(records, fields.options, (), "options", source, required=False)
    seen: dict[str, int] = {}
    rows = []
    for number, record in enumerate(records, 1):
        where = f"{source}:{number}"
        qid = str(_field(record, id_field)) if id_field and _field(record, id_field) is not None else str(number)
        if not qid.strip():
            raise InputError(f"{where}: empty id in field {id_field!r}")
        if qid in seen:
            raise InputError(f"{where}: id {qid!r} repeats record {seen[qid]}")
        seen[qid] = number
        options = _field(record, options_field) if options_field else None
        text = _field(record, text_field)
        if options is not None and not isinstance(options, str) and hasattr(options, "__len__") and not len(options):
            options = None  # an empty list, as null: an open question among multiple-choice ones (an Arrow column)
        # Lettered first: an index answer is read against the letters, and more options than letters is refused.
        options = None if options is None else _lettered(options, options_field, where)
        gold = _gold(_field(record, answer_field), options, pattern, where)
        if options is not None:
            text = mcq_text(None if text is None else str(text).strip(), options, gold, where, options_field,
                            f'"{text_field}"')
        rows.append({"localId": qid, "text": str(text).strip() if text is not None else None,
                     "answer": gold, "answerType": "choice" if options is not None else None, "position": number})
    return ItemSet(dataset, source, _questions(dataset, rows), pd.DataFrame(columns=["from_id", "to_id", "source"]),
                   defines_concepts=False)
