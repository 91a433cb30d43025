"""A campaign file read, checked and expanded into cells, each the command line of one normal run.

Assumes nothing of the graph: the plan is checked as text (keys, types, choices), every
mistake reported as one located line (``campaign.toml:12: models[1].backend: ...``), all
at once. A cell is one evaluator x model x dataset x seed (x tag, for ``answers``); its
``argv`` is the ``kstp`` command that runs it by hand, with ``--new-run`` so that cells
of one model and dataset that differ (two seeds) are runs of their own rather than
refused; the same configuration still resumes its run. Paths in the file (prompt files,
catalogues, ``output-path``) are read from the file's folder.

The file, TOML (``tomllib``) or YAML (``.yaml``/``.yml``)::

    [campaign]                       # optional
    seeds = [42]                     # a cell per seed (default: each command's, 42)
    output-path = "logs"             # answers and nextstep cells write their run logs here
    [[models]]
    name = "qwen7b"                  # the report's label (default: model)
    model = "Qwen/Qwen2.5-7B-Instruct"
    backend = "openai"
    base-url = "http://127.0.0.1:8000/v1"  # or a list: servers of the same model, as one
    gen-kwargs = {temperature = 0.6, max_tokens = 2048}
    datasets = ["frcsub"]
    [[evaluators]]
    kind = "answers"
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from kstp.errors import InputError
from kstp.inference.backend import BUILTIN_BACKENDS, MAX_SEED, Sampling

__all__ = ["KINDS", "RUN_EVALUATOR", "Cell", "Plan", "PlanError", "read_plan", "parse_plan"]

#: The evaluators a campaign runs, each the command of its cells.
KINDS = ("answers", "scaffolding", "dagmath", "rqeval", "nextstep", "annotate")
#: The evaluator name each kind's runs carry (``Run.evaluator``).
RUN_EVALUATOR = {"answers": "answers", "scaffolding": "scaffolding", "dagmath": "dagmath", "rqeval": "rqeval",
                 "nextstep": "nextstep", "annotate": "annotation"}
#: The --gen-kwargs keys: Sampling's fields but those set by options or the method.
GEN_KEYS = tuple(f for f in Sampling.__dataclass_fields__ if f not in ("n", "seed", "json_schema"))
_BACKENDS = (*BUILTIN_BACKENDS, "fringe-oracle")


class PlanError(InputError):
    """A campaign file with mistakes; ``mistakes`` holds one located line each (``file:line: key: what``)."""

    def __init__(self, path: Path, mistakes: list[str]):
        self.mistakes = mistakes
        count = f"{len(mistakes)} mistake{'s' if len(mistakes) > 1 else ''}"
        super().__init__(f"{path} has {count}; fix {'them' if len(mistakes) > 1 else 'it'}:\n" + "\n".join(mistakes))


# ---- the schema: key -> (kind of value, detail) --------------------------------------------
# kinds: str, bool, int (detail: the least), seed, seeds, strs, table, choice / choices (detail: the choices)
_STR, _BOOL = ("str", None), ("bool", None)


def _int(least: int) -> tuple:
    return ("int", least)


_CAMPAIGN = {"name": _STR, "output-path": _STR, "log-samples": _BOOL, "samples": _int(1), "seeds": ("seeds", None),
             "tags": ("strs", None), "limit": _int(1), "concurrency": _int(1)}
_MODEL = {"name": _STR, "model": _STR, "backend": ("choice", _BACKENDS), "base-url": ("urls", None),
          "model-args": ("table", None), "gen-kwargs": ("table", None), "concurrency": _int(1), "system-in-user": _BOOL}
_COMMON = {"kind": ("choice", KINDS), "name": _STR, "gen-kwargs": ("table", None), "seeds": ("seeds", None),
           "datasets": ("strs", None), "limit": _int(1)}
_OPTIONS = {
    "answers": {"samples": _int(1), "tags": ("strs", None), "prompt": ("choice", ("kstp", "paper")),
                "prompt-file": _STR, "few-shot": _STR, "num-fewshot": _int(0)},
    "scaffolding": {"strategies": ("choices", ("none", "random", "same-skill", "similarity", "prerequisite")),
                    "k": _int(1), "embedding-model": _STR, "prompt": ("choice", ("kstp", "paper"))},
    "dagmath": {"samples": _int(1), "shots": _int(0), "shots-from": _STR, "prompt-file": _STR, "malformed": _STR},
    "rqeval": {"k": _int(2), "p": _int(0), "data": _STR, "nli": _STR, "similarity-model": _STR,
               "num-layers": _int(1), "prompt": ("choice", ("neutral", "bare", "structured")),
               "robustness": ("choice", ("paper", "present")), "grading": ("choice", ("release", "kstp")),
               "overall": ("choice", ("pooled", "equal"))},
    "nextstep": {"catalogues": ("strs", None), "conditions": ("choices", ("P0", "P1", "P2", "P3")),
                 "orders": _int(1), "sampling": ("choice", ("paper", "deterministic")), "retries": _int(0)},
    "annotate": {"framework": _STR, "retries": _int(0), "prompt": ("choice", ("kstp", "release", "paper"))},
}
#: Options given as a file path, read from the campaign file's folder.
_PATHS = ("prompt-file", "few-shot", "data")


@dataclass(frozen=True)
class Cell:
    """One run of the campaign: ``argv`` is the kstp command (after ``kstp --graph G``) that runs it by hand.

    ``match`` is what the run stored in the graph must hold to be this cell's (see
    :func:`kstp.evaluators.campaign.progress.cell_run`): ``evaluator``, ``model``,
    ``dataset`` (None: any, a nextstep cell's catalogues), ``backend``, ``tag`` and
    ``sampling``, the sampling fields the plan sets (not the servers: a run is the model's,
    whichever servers answer it).
    """

    kind: str
    model: str
    dataset: str
    seed: int
    tag: str | None
    argv: tuple[str, ...]
    match: dict = field(compare=False)

    @property
    def label(self) -> str:
        """``answers · qwen7b · frcsub · seed 42`` (and the tag where there is one)."""
        return " · ".join([self.kind, self.model, self.dataset, f"seed {self.seed}", *([self.tag] if self.tag else [])])


@dataclass(frozen=True)
class Plan:
    """A checked campaign: its name, file and cells in run order (evaluator, model, dataset, seed, tag)."""

    name: str
    path: Path
    cells: tuple[Cell, ...]


# ---- reading, with each key's line ---------------------------------------------------------
def _toml_lines(text: str) -> dict[tuple, int]:
    """The line of each table, array-of-tables entry and key of a TOML text (keys of inline tables: their own
    key's line)."""
    lines: dict[tuple, int] = {}
    table: tuple = ()
    counts: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if found := re.match(r"\[\[\s*([\w.\-\"' ]+?)\s*\]\]", line):
            name = found.group(1).strip("\"'")
            counts[name] = counts.get(name, -1) + 1
            table = (name, counts[name])
        elif found := re.match(r"\[\s*([\w.\-\"' ]+?)\s*\]", line):
            table = tuple(part.strip("\"' ") for part in found.group(1).split("."))
        elif found := re.match(r"([\"']?[\w.\-]+[\"']?)\s*=", line):
            lines.setdefault((*table, *found.group(1).strip("\"'").split(".")), number)
            continue
        else:
            continue
        lines.setdefault(table, number)
    return lines


def _yaml_lines(node, path: tuple = (), lines: dict | None = None) -> dict[tuple, int]:
    """The line of each key and list item of a composed YAML document."""
    import yaml

    lines = {} if lines is None else lines
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            lines.setdefault((*path, key.value), key.start_mark.line + 1)
            _yaml_lines(value, (*path, key.value), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines.setdefault((*path, i), item.start_mark.line + 1)
            _yaml_lines(item, (*path, i), lines)
    return lines


def _load(path: Path) -> tuple[object, dict[tuple, int]]:
    """The file's data and the line of each key; a syntax error is one located line (a :class:`PlanError`)."""
    try:
        text = path.read_text()
    except UnicodeDecodeError as exc:
        raise PlanError(path, [f"{path}: not text ({exc.reason}); a campaign is a TOML or YAML file"]) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text), _yaml_lines(yaml.compose(text)) if text.strip() else {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise PlanError(path, [f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})"]) from None
    import tomllib

    try:
        return tomllib.loads(text), _toml_lines(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        words = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise PlanError(path, [f"{where}: not valid TOML ({words})"]) from None


class _Checker:
    """Collects the mistakes of one file, each located by its key's line."""

    def __init__(self, path: Path, lines: dict[tuple, int]):
        self.path, self.lines, self.mistakes = path, lines, []

    def say(self, where: tuple, text: str) -> None:
        for end in range(len(where), -1, -1):  # the key's line, else its table's
            if where[:end] in self.lines:
                place = f"{self.path}:{self.lines[where[:end]]}"
                break
        else:
            place = str(self.path)
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
        self.mistakes.append(f"{place}: {key}: {text}" if key else f"{place}: {text}")

    def table(self, value, where: tuple, schema: dict, required: tuple = ()) -> dict:
        """The keys of ``value`` that are right; a mistake for each unknown or wrong one and each missing one."""
        if not isinstance(value, dict):
            self.say(where, f"must be a table of keys, not {_shown(value)}")
            return {}
        kept = {}
        for key, item in value.items():
            if key not in schema and key in ("datasets", "models", "evaluators") and where:
                self.say((*where, key), f"{key} goes at the top of the file: in TOML a key after a [table] line "
                         "belongs to that table, so top-level keys come before the first one")
                continue
            if key not in schema:
                close = difflib.get_close_matches(str(key), list(schema), n=1)
                self.say((*where, key), "unknown key" + (f"; did you mean {close[0]}?" if close else "")
                         + f" Keys here: {', '.join(schema)}")
                continue
            checked = self.value(item, (*where, key), *schema[key])
            if checked is not None:
                kept[key] = checked
        for key in required:
            if key not in value:
                self.say(where, f"{key} is missing")
        return kept

    def value(self, item, where: tuple, kind: str, detail):
        """``item`` if it is of ``kind`` (None after saying the mistake)."""
        wrong = None
        if kind == "str":
            wrong = None if isinstance(item, str) and item.strip() else "must be non-empty text"
        elif kind == "bool":
            wrong = None if isinstance(item, bool) else "must be true or false"
        elif kind == "int":
            wrong = None if isinstance(item, int) and not isinstance(item, bool) and item >= detail else \
                f"must be a whole number of at least {detail}"
        elif kind == "seeds":
            good = isinstance(item, list) and item and all(isinstance(s, int) and not isinstance(s, bool)
                                                           and 0 <= s <= MAX_SEED for s in item)
            wrong = None if good else f"must be a list of seeds, whole numbers from 0 to {MAX_SEED:,}"
        elif kind == "strs":
            good = isinstance(item, list) and item and all(isinstance(s, str) and s.strip() for s in item)
            wrong = None if good else "must be a non-empty list of names"
        elif kind == "urls":  # one endpoint, or a list of the servers of one model
            urls = [item] if isinstance(item, str) else item
            good = isinstance(urls, list) and urls and all(isinstance(u, str) and u.strip() for u in urls)
            twice = sorted({u for u in urls if urls.count(u) > 1}) if good else []
            wrong = None if good and not twice else f"names {twice[0]} twice; give each server once" if twice else \
                "must be an endpoint URL or a list of them (servers of the same model)"
            if twice:
                self.say(where, wrong)
                return None
        elif kind == "table":
            wrong = None if isinstance(item, dict) else "must be a table of key = value (gen-kwargs = {temperature " \
                "= 0, max_tokens = 2048}), not text"
        elif kind == "choice":
            wrong = None if item in detail else f"{_shown(item)} is not one of {', '.join(detail)}"
        elif kind == "choices":
            bad = [c for c in item if c not in detail] if isinstance(item, list) and item else None
            wrong = None if bad == [] else f"{_shown(bad[0]) if bad else _shown(item)} is not one of " \
                f"{', '.join(detail)} (a list)"
        if wrong is not None:
            self.say(where, wrong if kind in ("choice", "choices") else f"{wrong}, not {_shown(item)}")
            return None
        return item


def _shown(value) -> str:
    return repr(value) if not isinstance(value, dict | list) or len(str(value)) < 40 else type(value).__name__


def read_plan(path: str | Path) -> Plan:
    """Read and check a campaign file; expand it into its cells.

    Parameters
    ----------
    path : str or Path
        A TOML file, or YAML where it ends in ``.yaml`` or ``.yml``.

    Returns
    -------
    Plan
        The cells in run order: evaluator by evaluator as the file lists them, then model,
        dataset, seed and tag.

    Raises
    ------
    PlanError
        With every mistake as one line ``file:line: key: what is wrong`` (an unknown key with
        the closest known one, a wrong type or choice, a missing model, dataset or evaluator,
        a gen-kwargs key that is no sampling field, a file that is not TOML or YAML).
    """
    path = Path(path)
    data, lines = _load(path)
    return parse_plan(data, path, lines)


def parse_plan(data, path: Path, lines: dict[tuple, int] | None = None) -> Plan:
    """:func:`read_plan` of data already read (``lines``: each key's line, for the messages).

    >>> plan = parse_plan({"models": [{"model": "m", "base-url": "http://h/v1"}], "datasets": ["toy"],
    ...                    "evaluators": [{"kind": "answers", "samples": 2}]}, Path("c.toml"))
    >>> [cell.label for cell in plan.cells], plan.cells[0].argv[:4]
    (['answers · m · toy · seed 42'], ('evaluate', 'answers', '--dataset', 'toy'))
    >>> parse_plan({"models": [{"model": "m", "backend": "vlm"}]}, Path("c.toml"))
    Traceback (most recent call last):
    ...
    kstp.evaluators.campaign.plan.PlanError: c.toml has 2 mistakes; fix them:
    c.toml: evaluators: name at least one evaluator ([[evaluators]] with a kind)
    c.toml: models[0].backend: 'vlm' is not one of openai, vllm, local, hf, fringe-oracle
    """
    check = _Checker(path, lines or {})
    if not isinstance(data, dict):
        check.say((), "must hold tables: campaign, models, datasets, evaluators")
        raise PlanError(path, check.mistakes)
    schema = {"campaign", "models", "datasets", "evaluators"}
    for key in data:
        if key not in schema:
            close = difflib.get_close_matches(str(key), sorted(schema), n=1)
            check.say((key,), "unknown key" + (f"; did you mean {close[0]}?" if close else "")
                      + " Keys here: campaign, models, datasets, evaluators")
    campaign = check.table(data.get("campaign", {}), ("campaign",), _CAMPAIGN)
    models = _entries(check, data, "models", "name at least one model ([[models]] with a model)")
    evaluators = _entries(check, data, "evaluators", "name at least one evaluator ([[evaluators]] with a kind)")
    datasets = check.value(data["datasets"], ("datasets",), "strs", None) if "datasets" in data else None
    top = {"models": [check.table(m, ("models", i), _MODEL, ("model",)) for i, m in enumerate(models)]}
    for i, model in enumerate(top["models"]):
        if "base-url" in model and model.get("backend", "openai") != "openai":
            check.say(("models", i, "base-url"), f"goes with backend openai, not {model['backend']}")
    checked = []
    for i, entry in enumerate(evaluators):
        kind = entry.get("kind") if isinstance(entry, dict) else None
        schema = {**_COMMON, **_OPTIONS.get(kind, {})}
        required = ("kind", *(("catalogues",) if kind == "nextstep" else ()),
                    *(("framework",) if kind == "annotate" else ()))
        options = check.table(entry, ("evaluators", i), schema, required)
        checked.append(options)
        if kind in KINDS and kind != "nextstep" and not (options.get("datasets") or datasets):
            check.say(("datasets",), "name at least one dataset (datasets = [\"frcsub\"]) or give each evaluator "
                      "its own")
    for where, table in [*((("models", i), m) for i, m in enumerate(top["models"])),
                         *((("evaluators", i), e) for i, e in enumerate(checked))]:
        for key in table.get("gen-kwargs", {}):
            if key not in GEN_KEYS:
                close = difflib.get_close_matches(key, GEN_KEYS, n=1)
                check.say((*where, "gen-kwargs", key), "no sampling field" + (f"; did you mean {close[0]}?"
                          if close else "") + f" Sampling keys: {', '.join(GEN_KEYS)}")
    labels = [m.get("name") or m.get("model") for m in top["models"]]
    for i, label in enumerate(labels):
        if label and labels.index(label) != i:
            check.say(("models", i, "name"), f"{label!r} names two models; give each its own name")
    if campaign.get("tags") and not any(e.get("kind") == "answers" for e in checked):
        check.say(("campaign", "tags"), "only answers runs take a tag, and no evaluator is answers")
    if check.mistakes:
        raise PlanError(path, sorted(dict.fromkeys(check.mistakes), key=_line_of))
    folder = path.parent
    cells = [cell for evaluator in checked for model in top["models"]
             for cell in _cells(evaluator, model, campaign, datasets or [], folder)]
    return Plan(campaign.get("name") or path.stem, path, tuple(cells))


def _line_of(mistake: str) -> int:
    found = re.match(r"[^:]*:(\d+):", mistake)
    return int(found.group(1)) if found else 0


def _entries(check: _Checker, data: dict, key: str, missing: str) -> list:
    value = data.get(key)
    if value is None or value == []:
        check.say((key,), missing)
        return []
    if not isinstance(value, list):
        check.say((key,), f"must be a list of tables ([[{key}]] entries), not {_shown(value)}")
        return []
    return value


def _local(value: str, folder: Path) -> str:
    """A path of the file, read from its folder (a name that is no file there stays as it is: a shipped
    catalogue id, a model id)."""
    candidate = Path(value).expanduser()
    candidate = candidate if candidate.is_absolute() else folder / candidate
    return str(candidate.resolve()) if candidate.exists() else value


def _cells(evaluator: dict, model: dict, campaign: dict, datasets: list[str], folder: Path) -> list[Cell]:
    kind = evaluator["kind"]
    seeds = evaluator.get("seeds") or campaign.get("seeds") or [42]
    tags = (evaluator.get("tags") or campaign.get("tags") or [None]) if kind == "answers" else [None]
    generation = {**model.get("gen-kwargs", {}), **evaluator.get("gen-kwargs", {})}
    label = model.get("name") or model["model"]
    backend = model.get("backend", "openai")
    samples = evaluator.get("samples", campaign.get("samples")) if kind in ("answers", "dagmath") else None
    limit = evaluator.get("limit", campaign.get("limit"))
    targets = ["+".join(evaluator["catalogues"])] if kind == "nextstep" else (evaluator.get("datasets") or datasets)
    cells = []
    for dataset in targets:
        for seed in seeds:
            for tag in tags:
                common = ["--model", model["model"], "--backend", backend]
                for url in _urls(model):  # several servers of the model: --base-url repeated
                    common += ["--base-url", url]
                if "model-args" in model:
                    common += ["--model-args", json.dumps(model["model-args"])]
                if generation:
                    common += ["--gen-kwargs", json.dumps(generation)]
                concurrency = model.get("concurrency", campaign.get("concurrency"))
                if concurrency:
                    common += ["--concurrency", str(concurrency)]
                if model.get("system-in-user"):
                    common.append("--system-in-user")
                common += ["--seed", str(seed), "--new-run"]
                argv = _argv(kind, dataset, evaluator, campaign, common, samples, limit, tag, folder)
                sampling = {k: (v.split("|") if k == "stop" and isinstance(v, str) else v)
                            for k, v in generation.items()}
                sampling["seed"] = seed
                if samples is not None:
                    sampling["n"] = samples
                match = {"evaluator": RUN_EVALUATOR[kind], "model": model["model"],
                         "dataset": None if kind == "nextstep" else dataset, "backend": backend,
                         "tag": tag,
                         "sampling": sampling}
                cells.append(Cell(kind, label, dataset, seed, tag, tuple(argv), match))
    return cells


def _urls(model: dict) -> list[str]:
    """The model's ``base-url``: one endpoint or a list, as a list (empty where it names none).

    >>> _urls({"base-url": "http://a/v1"}), _urls({"base-url": ["http://a/v1", "http://b/v1"]}), _urls({})
    (['http://a/v1'], ['http://a/v1', 'http://b/v1'], [])
    """
    urls = model.get("base-url", [])
    return [urls] if isinstance(urls, str) else list(urls)


def _argv(kind: str, dataset: str, options: dict, campaign: dict, common: list[str], samples: int | None,
          limit: int | None, tag: str | None, folder: Path) -> list[str]:
    """The command of one cell (what follows ``kstp --graph G``)."""
    def flag(key: str, name: str | None = None) -> list[str]:
        if key not in options:
            return []
        value = options[key]
        return [f"--{name or key}", _local(value, folder) if key in _PATHS else str(value)]

    extra = [*(["--limit", str(limit)] if limit else []), *(["--samples", str(samples)] if samples else [])]
    logs = (["--output-path", str((folder / Path(campaign["output-path"]).expanduser()).resolve())]
            if "output-path" in campaign else []) + \
        (["--log-samples"] if campaign.get("log-samples") and "output-path" in campaign else [])
    if kind == "answers":
        return ["evaluate", "answers", "--dataset", dataset, *common, *extra, *(["--tag", tag] if tag else []),
                *flag("prompt"), *flag("prompt-file"), *flag("few-shot"), *flag("num-fewshot"), *logs]
    if kind == "scaffolding":
        strategies = [w for s in options.get("strategies", []) for w in ("--strategy", s)]
        return ["evaluate", "scaffolding", "--dataset", dataset, *common, *extra, *strategies, *flag("k"),
                *flag("embedding-model"), *flag("prompt")]
    if kind == "dagmath":
        return ["evaluate", "dagmath", "--dataset", dataset, *common, *extra, *flag("shots"), *flag("shots-from"),
                *flag("prompt-file"), *flag("malformed")]
    if kind == "rqeval":
        return ["evaluate", "rqeval", "--dataset", dataset, *common, *extra,
                *(w for key in ("k", "p", "data", "nli", "similarity-model", "num-layers", "prompt", "robustness",
                                "grading", "overall") for w in flag(key))]
    if kind == "nextstep":
        catalogues = [w for c in options["catalogues"] for w in ("--catalogue", _local(c, folder))]
        conditions = ["--conditions", ",".join(options["conditions"])] if "conditions" in options else []
        return ["evaluate", "nextstep", *catalogues, *conditions, *flag("orders"), *flag("sampling"),
                *flag("retries"), *common, *logs]
    return ["annotate", "concepts", "--items", dataset, "--framework", options["framework"], *common,
            *(["--limit", str(limit)] if limit else []), *flag("retries"), *flag("prompt")]
