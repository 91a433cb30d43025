"""A run as data: its samples as a table with documented dtypes, and log files that describe it whole.

Assumes the bookkeeping of :mod:`kstp.inference.runs`: a run's completions are
Responses linked ``IN_RUN`` to its Run, which keeps the configuration (evaluator,
model, backend and endpoint, dataset, sampling with the seed, prompt template hash,
tag), the template's text, the kstp version and git commit it was created with, and
its start and end times. :func:`run_samples` reads every sample of a run with its
question, gold answer, the chat asked, the reply and its grade (the ``run_export``
query); :func:`run_header` reads the configuration; :func:`environment` says where
the command that writes a log runs (Python, platform, package versions).

A log (``--output-path``, in the shape of lm-eval's ``results.json`` with
``samples_*.jsonl`` and Inspect's eval logs) is ``<run>.json``, the summary figures
at the top level with ``config``, ``environment`` and ``session`` beside them, and,
with ``--log-samples``, ``<run>.samples.jsonl``, one :data:`SAMPLE_DTYPES` row per
sample. :func:`read_run_log` reads both back; its :meth:`RunLog.statistics`
recomputes accuracy, standard errors, pass@k and majority vote from the samples
alone, so a log is analysed, and its run re-created, with the graph gone.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kstp._version import __version__
from kstp.csvcells import restore, write_csv
from kstp.errors import InputError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.inference.runs import git_hash, now
from kstp.inference.statistics import ESTIMATORS, sample_statistics

__all__ = ["LOG_PACKAGES", "SAMPLE_DTYPES", "EXPORT_FORMATS", "environment", "run_header", "run_samples",
           "typed_samples", "sample_records", "export_samples", "read_samples", "log_stem", "run_log", "RunLog",
           "read_run_log"]

#: The packages whose versions a log records (those installed; a backend's own among them).
LOG_PACKAGES = ("kstp", "openai", "vllm", "transformers", "torch", "xllamacpp", "math-verify", "sympy", "numpy",
                "pandas", "pyarrow", "scipy", "statsmodels", "ladybug", "neo4j")

#: The columns of a run's samples and their pandas dtypes, in order (``kstp runs export``,
#: ``--log-samples``, ``graph.frame("run_export", ...)``): ``string`` and ``boolean`` are pandas'
#: nullable types (a missing value is ``<NA>``), ``Int64`` a nullable integer.
SAMPLE_DTYPES = {
    "runId": "string", "responseId": "string", "questionId": "string", "localId": "string", "dataset": "string",
    "question": "string", "gold": "string", "prompt": "string", "promptHash": "string", "sampleIndex": "Int64",
    "seed": "Int64", "text": "string", "reasoning": "string", "extracted": "string", "extractionMethod": "string",
    "correct": "boolean", "verdict": "string", "finishReason": "string", "error": "string", "tokensIn": "Int64",
    "tokensOut": "Int64", "latencyS": "float64", "createdAt": "string"}

#: The file formats of :func:`export_samples`.
EXPORT_FORMATS = ("csv", "parquet", "jsonl")


def environment() -> dict:
    """Where this process runs: kstp's version and git commit, Python, the platform, package versions.

    Returns
    -------
    dict
        ``kstpVersion``, ``gitCommit`` (None outside a git checkout), ``python``,
        ``platform`` and ``packages`` (name -> version, for the :data:`LOG_PACKAGES` installed);
        where torch is loaded (a model ran in this process), ``torch`` with its CPU
        ``threads`` and the ``devices`` it sees.
    """
    packages = {}
    for name in LOG_PACKAGES:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    found = {"kstpVersion": __version__, "gitCommit": git_hash(), "python": sys.version.split()[0],
             "platform": platform.platform(), "packages": packages}
    torch = sys.modules.get("torch")  # not imported for this: only where a model ran here
    if torch is not None:
        gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \
            if torch.cuda.is_available() else []
        found["torch"] = {"threads": torch.get_num_threads(), "devices": gpus or ["cpu"]}
    return found


def run_header(store: GraphStore, run_id: str) -> dict:
    """A run's whole configuration as its Run node keeps it: what a log's ``config`` holds.

    Returns
    -------
    dict
        ``runId, evaluator, evaluatorVersion, status, model, backend, endpoint, dataset,
        tag, sampling`` (temperature, top_p, max_tokens, seed, stop, ...), ``seed,
        promptTemplateHash, promptTemplate`` (``{"system", "user", ...}``; None for a run
        created before templates were recorded), ``options, configHash, kstpVersion,
        gitCommit`` (at the run's creation), ``startedAt, finishedAt`` (ISO 8601, UTC).

    Raises
    ------
    UnknownIdError
        When the graph has no such run.
    """
    nodes = store.nodes("Run", [run_id])
    if nodes.empty:
        raise UnknownIdError(f"no run {run_id!r} in the graph (kstp runs list shows them)")
    run = {k: (None if not isinstance(v, list | dict) and pd.isna(v) else v) for k, v in nodes.iloc[0].items()}
    config = json.loads(run.get("config") or "{}")
    sampling = config.get("sampling") or json.loads(run.get("sampling") or "{}")
    template = run.get("promptTemplate")
    return {"runId": run_id, "evaluator": run.get("evaluator"), "evaluatorVersion": run.get("evaluatorVersion"),
            "status": run.get("status"), "model": run.get("model"), "backend": run.get("backend"),
            "endpoint": config.get("endpoint", {}), "dataset": run.get("dataset"), "tag": config.get("tag"),
            "sampling": sampling, "seed": sampling.get("seed"),
            "promptTemplateHash": config.get("promptTemplateHash", run.get("promptTemplateHash")),
            "promptTemplate": json.loads(template) if template else None, "options": config.get("options", {}),
            "configHash": run.get("configHash"), "kstpVersion": run.get("kstpVersion"),
            "gitCommit": run.get("gitHash"), "startedAt": run.get("startedAt"), "finishedAt": run.get("finishedAt")}


def typed_samples(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the :data:`SAMPLE_DTYPES` columns it has, in their order and dtypes (others after).

    >>> typed_samples(pd.DataFrame({"correct": [True, None], "sampleIndex": [0, 1]})).dtypes.astype(str).tolist()
    ['Int64', 'boolean']
    """
    known = [c for c in SAMPLE_DTYPES if c in frame]
    out = frame[known + [c for c in frame if c not in SAMPLE_DTYPES]].copy()
    for column in known:
        values = out[column]
        if SAMPLE_DTYPES[column] == "boolean" and values.dtype == object:
            values = values.map(lambda v: v if v is None or isinstance(v, bool) else
                                (None if isinstance(v, float) and math.isnan(v) else
                                 {"true": True, "false": False}.get(str(v).lower(), bool(v))))
        out[column] = values.astype(SAMPLE_DTYPES[column])
    return out


def run_samples(store: GraphStore, run_id: str) -> pd.DataFrame:
    """Every sample of the run, one row each, with :data:`SAMPLE_DTYPES` (``runId`` first).

    In question and sample order; a sample of no question (a next-step recommendation,
    which answers a catalogue state) has ``questionId`` missing and comes first. A
    completion is shared by every question whose prompt is the same word for word (its
    cache key is the prompt); only the questions of the run's own dataset are its rows.
    """
    frame = store.frame("run_export", {"runId": run_id})
    run = store.nodes("Run", [run_id])
    datasets = str(run.iloc[0]["dataset"]).split("+") if len(run) and pd.notna(run.iloc[0].get("dataset")) else []
    if datasets and len(frame):
        frame = frame[frame["dataset"].isna() | frame["dataset"].isin(datasets)].reset_index(drop=True)
    frame.insert(0, "runId", run_id)
    return typed_samples(frame)


def sample_records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain Python records, every missing value None (what a JSON line holds)."""
    return [{k: None if v is pd.NA or (isinstance(v, float) and math.isnan(v)) else
             (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in frame.astype(object).to_dict("records")]


def export_samples(frame: pd.DataFrame, path: Path, fmt: str) -> Path:
    """Write a samples table as CSV, Parquet or JSON lines (``fmt``, :data:`EXPORT_FORMATS`).

    CSV holds missing values as empty cells and booleans as ``True``/``False``; Parquet
    keeps the dtypes themselves; JSON lines hold one object per sample, ``null`` where
    a value is missing. :func:`read_samples` reads any of the three back with
    :data:`SAMPLE_DTYPES`.

    Raises
    ------
    ValueError
        On a format outside :data:`EXPORT_FORMATS`.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        write_csv(frame, path, index=False)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            for record in sample_records(frame):
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def read_samples(path: str | Path) -> pd.DataFrame:
    """A samples file written by :func:`export_samples` or ``--log-samples``, with :data:`SAMPLE_DTYPES`.

    The format is the file's suffix: ``.csv``, ``.parquet``, ``.jsonl``.

    Raises
    ------
    InputError
        When the file cannot be read as samples (the message names it).
    """
    path = Path(path)
    try:
        if path.suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""]).map(restore)
        elif path.suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_json(path, lines=True, dtype=False)
        return typed_samples(frame)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a kstp samples file ({exc})") from None


#: Bytes of a log file's stem: a file system's 255-byte names less the longest ending kstp adds
#: (``_trajectories.csv``, ``.samples.parquet``).
STEM_BYTES = 200


def log_stem(run_id: str) -> str:
    """A run's log files are named after its id, ``:`` and ``/`` as ``_``.

    An id past :data:`STEM_BYTES` bytes in UTF-8 (a 256-character model name) is cut at a
    character and ends in ``_`` and 12 hex digits of its SHA-256, so every name fits a
    file system's 255 bytes and two long ids stay apart.

    >>> log_stem("answers:Qwen/Qwen2.5-7B-Instruct:frcsub:3f2a9c1d0b7e")
    'answers_Qwen_Qwen2.5-7B-Instruct_frcsub_3f2a9c1d0b7e'
    >>> len(log_stem("answers:" + "m" * 256 + ":frcsub:3f2a9c1d0b7e").encode())
    200
    """
    stem = run_id.replace(":", "_").replace("/", "_")
    if len(stem.encode()) <= STEM_BYTES:
        return stem
    digest = hashlib.sha256(run_id.encode()).hexdigest()[:12]
    cut = stem.encode()[:STEM_BYTES - len(digest) - 1].decode(errors="ignore")
    return f"{cut}_{digest}"


def run_log(store: GraphStore, run_id: str, summary: dict, started_at: str, argv: list[str] | None = None) -> dict:
    """The content of ``<run>.json``: ``summary`` with the run's ``config`` (:func:`run_header`), the
    ``environment`` (:func:`environment`) and the ``session`` that wrote it (command line, start, end)."""
    return {**summary, "config": run_header(store, run_id), "environment": environment(),
            "session": {"argv": list(argv if argv is not None else sys.argv), "startedAt": started_at,
                        "finishedAt": now()}}


@dataclass
class RunLog:
    """A run's log files read back (:func:`read_run_log`).

    Attributes
    ----------
    summary : dict
        ``<run>.json`` as written: the figures, ``config``, ``environment``, ``session``.
    samples : pandas.DataFrame or None
        ``<run>.samples.jsonl`` with :data:`SAMPLE_DTYPES`; None where it was not written.
    path : pathlib.Path
    """

    summary: dict
    samples: pd.DataFrame | None
    path: Path
    config: dict = field(init=False)

    def __post_init__(self):
        self.config = self.summary.get("config") or {}

    def statistics(self) -> dict:
        """Accuracy, standard errors, pass@k and majority vote recomputed from the samples alone
        (:func:`~kstp.inference.statistics.sample_statistics`), with ``questions``, ``samples`` and
        the ``estimators``.

        Raises
        ------
        InputError
            When the log has no samples file (written without ``--log-samples``).
        """
        if self.samples is None:
            raise InputError(f"{self.path}: no samples beside it ({self.path.name[:-5]}.samples.jsonl); "
                             "write the log with --log-samples to recompute its figures")
        samples = self.samples[self.samples["questionId"].notna()]
        return {"questions": int(samples["questionId"].nunique()), "samples": len(samples),
                **sample_statistics(samples), "estimators": ESTIMATORS}


def read_run_log(path: str | Path) -> RunLog:
    """Read ``<run>.json`` and, where it is there, ``<run>.samples.jsonl`` beside it.

    Raises
    ------
    InputError
        When the file is missing or is not a kstp run log.
    """
    path = Path(path)
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a kstp run log ({exc})") from None
    if not isinstance(summary, dict) or "runId" not in summary:
        raise InputError(f"{path}: not a kstp run log (no runId); logs are the <run>.json of --output-path")
    samples_path = path.with_name(path.name.removesuffix(".json") + ".samples.jsonl")
    return RunLog(summary, read_samples(samples_path) if samples_path.exists() else None, path)
