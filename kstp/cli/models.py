"""What every command that drives a model shares: backend options, sampling from
``--gen-kwargs``, starting the backend, a progress bar and the run files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from kstp.cli.output import SEED, dumps, message, on_interrupt, progress_bar, status
from kstp.errors import ConfigError
from kstp.inference.backend import BUILTIN_BACKENDS, CONTEXT_WINDOWS, MAX_TOKENS, Backend, Sampling, get_backend

__all__ = ["GEN_KEYS", "MODEL_BACKENDS", "backend_options", "backend_options_with", "model_options", "prompt_option",
           "parse_kwargs", "parse_sampling", "start_backend",
           "progress_bar", "write_run_files", "report_failures", "run_truncation", "truncation_line", "gen_kwargs_help",
           "budget", "metric_name", "results_rows"]

#: Keys --gen-kwargs accepts (the rest of Sampling is set by options or by the method).
GEN_KEYS = ("temperature", "top_p", "max_tokens", "context", "stop", "top_k", "min_p", "repetition_penalty")
#: Backends that drive a language model (the built-in ones, openai the default); every model command offers these.
MODEL_BACKENDS = tuple(BUILTIN_BACKENDS)
_HELP = {"openai": "any OpenAI-compatible endpoint", "vllm": "offline vLLM", "local": "a GGUF on this CPU",
         "hf": "a transformers model in this process (GPU or CPU)",
         "fringe-oracle": "the deterministic next-step recommender"}


_SYSTEM_IN_USER = "kstp.system_in_user"  # ctx.meta key: --system-in-user, read by start_backend


def _remember_system_in_user(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[_SYSTEM_IN_USER] = value


def backend_options_with(*extra: str) -> Callable[[Callable], Callable]:
    """:func:`backend_options` whose --backend also offers the method-specific backends ``extra``."""
    return lambda command: _backend_options(command, MODEL_BACKENDS + extra)


def backend_options(command: Callable) -> Callable:
    """Add --backend (openai, vllm, local), --base-url, --model-args, --concurrency and --resume/--new-run."""
    return _backend_options(command, MODEL_BACKENDS)


def _backend_options(command: Callable, names: tuple[str, ...]) -> Callable:
    for option in reversed((
        click.option("--backend", type=click.Choice(names), default="openai", show_default=True,
                     help="; ".join(f"{n}: {_HELP.get(n, n)}" for n in names) + "."),
        click.option("--base-url", multiple=True, help="Endpoint of the openai backend, e.g. "
                     "http://127.0.0.1:8000/v1 (default: OPENAI_BASE_URL, else the OpenAI API; key: OPENAI_API_KEY). "
                     "Repeat it for several servers of the same model: the window is spread over them (a faster "
                     "one takes more; one that goes away has its requests asked of the others), and the run is "
                     "the model's, whichever servers answer it."),
        click.option("--model-args", help="Backend options k=v,... (vllm: anything vllm.LLM takes, e.g. "
                     "tensor_parallel_size=2; hf: threads, and from_pretrained arguments, e.g. "
                     "device_map=auto,dtype=bfloat16; "
                     "local: threads, context (the server's window; default the run's context window, else "
                     "4096), parallel; openai: retries, timeout (seconds a whole request may take), max_wait, "
                     "outage (seconds a server away mid-run is waited for, default 180))."),
        click.option("--concurrency", type=click.IntRange(min=1),
                     help="Requests in flight, refilled as each finishes (default: openai 64 for a server on this "
                     "machine, 32 for a remote API, summed over several --base-url; local 64; vllm 4096, its "
                     "scheduler batches them; hf 64 on a GPU, "
                     "8 on the CPU)."),
        click.option("--system-in-user", is_flag=True, expose_value=False, callback=_remember_system_in_user,
                     help="Put the system instruction at the start of the user turn, for chat templates without "
                     "a system role (Gemma; the openai backend also does it on its own when the server says "
                     "'System role not supported'). Part of the run's identity."),
        click.option("--resume/--new-run", default=True, show_default=True,
                     help="Resume the run with this configuration; --new-run allows a changed configuration (a "
                     "run of its own). The same configuration always resumes its run, --new-run or not: a fresh "
                     "run of it is a replicate (evaluate answers --tag or --repeat)."),
    )):
        command = option(command)
    return command


def gen_kwargs_help(max_tokens: int, temperature: float = 0.6, top_p: float | None = 0.95,
                    context: int | None = None) -> str:
    """The --gen-kwargs help of a command whose sampling defaults are these (``top_p`` None: not sent;
    ``context``: a context window, :attr:`~kstp.inference.backend.Sampling.context`).

    >>> gen_kwargs_help(32768)[:75]
    'Sampling k=v,...: temperature (0.6), top_p (0.95), max_tokens (32768), stop'
    >>> gen_kwargs_help(256, 0.2, None)[:78]
    'Sampling k=v,...: temperature (0.2), top_p (not sent), max_tokens (256), stop;'
    >>> gen_kwargs_help(16384, context=16384)[51:156]
    'max_tokens (16384), context (16384: prompt plus reply; the openai backend leaves it to the server), stop;'
    """
    window = f"context ({context}: prompt plus reply; the openai backend leaves it to the server), " if context else ""
    return (f"Sampling k=v,...: temperature ({temperature}), top_p ({'not sent' if top_p is None else top_p}), "
            f"max_tokens ({max_tokens}), {window}stop; top_k, min_p, repetition_penalty where the backend has "
            "them (not sent unless given); none unsets a field; a JSON object for lists.")


def budget(command: str) -> dict:
    """The generation budget of an evaluate command (:data:`~kstp.inference.backend.MAX_TOKENS`), as
    :func:`parse_sampling` defaults: ``max_tokens``, and ``context`` where the paper's figure is a context window.

    >>> budget("answers"), budget("dagmath")
    ({'max_tokens': 16384, 'context': 16384}, {'max_tokens': 32768})
    """
    tokens = MAX_TOKENS[command]
    return {"max_tokens": tokens, **({"context": tokens} if command in CONTEXT_WINDOWS else {})}


def model_options(command: Callable | None = None, *, max_tokens: int | None = None, temperature: float = 0.6,
                  top_p: float | None = 0.95, context: int | None = None) -> Callable:
    """Add --model, --gen-kwargs and --seed, then :func:`backend_options`; ``max_tokens``, ``temperature``,
    ``top_p`` and ``context`` are the command's defaults shown in --gen-kwargs' help
    (``@model_options(max_tokens=N)``)."""
    if command is None:
        return lambda wrapped: model_options(wrapped, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                                             context=context)
    for option in reversed((
        click.option("--model", required=True, help="Model name (as the server knows it), a vLLM or transformers "
                     "model path, or, for --backend local, smollm2 or a GGUF path."),
        click.option("--gen-kwargs", help=gen_kwargs_help(max_tokens, temperature, top_p, context) if max_tokens else
                     "Sampling k=v,...: temperature, top_p, max_tokens, stop."),
        click.option("--seed", type=SEED, default=42, show_default=True, help="Sampling seed (and selection seed)."),
    )):
        command = option(command)
    return backend_options(command)


#: The answer prompt sets (kstp.evaluators.answers.PROMPTS, DEFAULT_PROMPT; named here so --help imports no
#: evaluator).
_ANSWER_PROMPTS = ("kstp", "paper")


def prompt_option(command: Callable) -> Callable:
    """Add --prompt kstp|paper: the answer prompt set of ``evaluate answers`` and ``evaluate scaffolding``."""
    return click.option("--prompt", type=click.Choice(_ANSWER_PROMPTS), default=_ANSWER_PROMPTS[0],
                        show_default=True, help="Prompt set: kstp's own, or paper 1's Appendix A as written "
                        "(Prompt 1; with exemplars Prompt 3). Part of the run's identity.")(command)


#: Values that unset a field (``--gen-kwargs top_p=none``: not sent, the provider's default).
_UNSET = ("none", "null")


def parse_kwargs(text: str | None, option: str, verbatim: tuple[str, ...] = ()) -> dict:
    """``k=v,k2=v2`` (or a JSON object) into a dict; values become int, float, bool, None or str.

    ``none`` (or ``null``) is None: the field is unset. The values of the keys in
    ``verbatim`` are kept exactly as typed (no cast, no stripping: ``stop=1e3`` is the
    string ``1e3``, a typed newline stays). A text that starts with ``{`` is read as JSON,
    as lm-eval's ``--gen_kwargs`` is, for lists and for values with commas.

    Raises
    ------
    click.BadParameter
        When a part does not read ``key=value``, or the JSON is not an object.

    >>> parse_kwargs("temperature=0.2,max_tokens=512,stop=###", "--gen-kwargs")
    {'temperature': 0.2, 'max_tokens': 512, 'stop': '###'}
    >>> parse_kwargs("top_p=none,stop=1e3", "--gen-kwargs", verbatim=("stop",))
    {'top_p': None, 'stop': '1e3'}
    >>> parse_kwargs('{"stop": ["\\\\n\\\\n", "Q:"], "temperature": 0}', "--gen-kwargs")
    {'stop': ['\\n\\n', 'Q:'], 'temperature': 0}
    """
    if text is not None and text.lstrip().startswith("{"):
        import json

        try:
            out = json.loads(text)
        except ValueError as exc:
            raise click.BadParameter(f"not valid JSON ({exc})", param_hint=option) from None
        if not isinstance(out, dict):
            raise click.BadParameter("JSON must be an object of key: value", param_hint=option)
        return out
    out: dict = {}
    for part in filter(None, (text or "").split(",")):
        if "=" not in part:
            raise click.BadParameter(f"{part!r} must read key=value", param_hint=option)
        key, raw = part.split("=", 1)
        key, value = key.strip(), raw.strip()
        if key in verbatim:
            out[key] = raw
            continue
        if value.lower() in _UNSET:
            out[key] = None
            continue
        for cast in (int, float):
            try:
                out[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            out[key] = {"true": True, "false": False}.get(value.lower(), value)
    return out


def _stops(value) -> tuple[str, ...]:
    """The stop strings of a ``stop`` value (``a|b`` as typed, or a JSON list), each sent exactly as given.

    Raises
    ------
    click.BadParameter
        On an empty stop string (it would end every reply before it starts) or a value that is not text.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        stops = value.split("|")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        stops = value
    else:
        raise click.BadParameter(f"stop must be text or a JSON list of strings, not {value!r}",
                                 param_hint="--gen-kwargs")
    if any(stop == "" for stop in stops):
        raise click.BadParameter(f"an empty stop string (in stop={value!r}) would end every reply at once; a "
                                 "stop with a newline or comma goes in the JSON form: "
                                 "--gen-kwargs '{\"stop\": [\"\\n\\n\"]}'",
                                 param_hint="--gen-kwargs")
    return tuple(stops)


def _reasoning_defaults(generation: dict, given: dict) -> None:
    """Unset the temperature and top-p defaults for an OpenAI reasoning model (o1, o3, o4-mini, gpt-5) on the
    openai backend, which refuses any but its own (1); a value the user typed is sent as typed."""
    ctx = click.get_current_context(silent=True)
    params = ctx.params if ctx is not None else {}
    if params.get("backend", "openai") != "openai" or not params.get("model"):
        return
    from kstp.inference.backends.openai_compat import reasoning_model

    base = {k: Sampling.__dataclass_fields__[k].default for k in ("temperature", "top_p")}
    unset = [k for k in base if k not in given and generation.get(k, base[k]) is not None]
    if reasoning_model(params["model"]) and unset:
        for key in unset:
            generation[key] = None
        message(f"{params['model']} is an OpenAI reasoning model: {' and '.join(unset)} not sent (it takes only its "
                "default, 1), and the reply cap goes as max_completion_tokens")


def parse_sampling(gen_kwargs: str | None, defaults: dict | None = None, **fixed) -> Sampling:
    """Sampling from ``--gen-kwargs`` over the method's ``defaults``; ``fixed`` (n, seed) set by options.

    ``stop`` takes several strings separated by ``|``, each sent exactly as typed (no
    stripping, no number reading), or a JSON list in the JSON form of ``--gen-kwargs``;
    ``none`` unsets a field (not sent: the provider's default; ``max_tokens=none``: no cap,
    the server's or model's window bounds the reply). Under the openai backend an OpenAI
    reasoning model (o1, o3, o4-mini, gpt-5) gets no default temperature or top-p.

    Raises
    ------
    click.BadParameter
        For a key outside :data:`GEN_KEYS`, an empty stop string, or a value Sampling refuses.

    A ``max_tokens`` given without a ``context`` is the reply cap alone: the default window goes; a
    ``context`` given without a ``max_tokens`` lets the reply fill it.

    >>> parse_sampling("max_tokens=64,stop=a|b", {"temperature": 0.7}, seed=3)
    Sampling(n=1, temperature=0.7, top_p=0.95, max_tokens=64, seed=3, stop=('a', 'b'), json_schema=None, context=None, \
top_k=None, min_p=None, repetition_penalty=None)
    >>> parse_sampling("max_tokens=64", budget("answers")).context, parse_sampling(None, budget("answers")).context
    (None, 16384)
    >>> wide = parse_sampling("context=32768", budget("answers"))
    >>> wide.max_tokens, wide.context
    (32768, 32768)
    >>> parse_sampling("top_p=none,temperature=none").top_p is None
    True
    """
    given = parse_kwargs(gen_kwargs, "--gen-kwargs", verbatim=("stop",))
    generation = {**(defaults or {}), **given}
    if "max_tokens" in given and "context" not in given:
        generation.pop("context", None)
    elif "context" in given and "max_tokens" not in given and isinstance(given["context"], int):
        generation["max_tokens"] = given["context"]
    unknown = sorted(set(generation) - set(GEN_KEYS))
    if unknown:
        raise click.BadParameter(f"unknown key {unknown[0]!r}; use {', '.join(GEN_KEYS)}", param_hint="--gen-kwargs")
    if "stop" in generation:
        generation["stop"] = _stops(generation["stop"])
    _reasoning_defaults(generation, given)
    try:
        return Sampling(**generation, **fixed)
    except (TypeError, ConfigError) as exc:
        raise click.BadParameter(str(exc), param_hint="--gen-kwargs") from None


def check_base_url(backend: str, base_url: str | tuple[str, ...] | None) -> None:
    """Refuse ``--base-url`` with a backend other than openai (a usage error, said before any graph work).

    Raises
    ------
    click.BadParameter
        When --base-url is given to a backend other than openai.
    """
    if base_url and backend != "openai":
        raise click.BadParameter("--base-url goes with --backend openai", param_hint="--base-url")


def start_backend(backend: str, model: str, model_args: str | None, base_url: str | tuple[str, ...] | None,
                  concurrency: int | None,
                  seed: int, sampling: Sampling | None = None, **extra) -> Backend:
    """Start the named backend for ``model`` with ``--model-args`` (and the options that belong to it).

    ``--concurrency`` (the window) goes to every backend, ``--system-in-user`` as
    ``system_role="user"``. The local backend's server gets the run's context window
    (``sampling.context``) unless ``--model-args context`` names a larger one: it applies the
    window to each request itself, so the window recorded with the run is the one applied.

    Raises
    ------
    click.BadParameter
        When --base-url is given to a backend other than openai, or the local backend's
        ``--model-args context`` is smaller than the run's context window.
    """
    options = {**parse_kwargs(model_args, "--model-args"), **extra}
    check_base_url(backend, base_url)
    if backend == "local" and sampling is not None and sampling.context is not None:
        _local_window(options, sampling.context)
    if backend == "openai":  # --base-url given several times: a list, the servers of one model
        urls = [base_url] if isinstance(base_url, str) else list(base_url or ())
        options["base_url"] = urls if len(urls) > 1 else (urls[0] if urls else None)
    if concurrency:
        options["concurrency"] = concurrency
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(_SYSTEM_IN_USER):
        options["system_role"] = "user"
    if backend in ("vllm", "hf"):
        options.setdefault("seed", seed)
    # a model run stores each completion as it arrives and skips the stored ones when run again
    on_interrupt("every completion that had arrived is stored; run the same command again to resume.")
    with status(f"starting the {backend} backend for {model}"):
        return get_backend(backend, model, **options)


def _local_window(options: dict, window: int) -> None:
    """The local server's window for a run whose context window is ``window`` (set in ``options``).

    >>> options = {}; _local_window(options, 16384); options
    {'context': 16384}
    >>> options = {}; _local_window(options, 10); options  # llama.cpp's least; each request is held to 10
    {'context': 16}
    >>> _local_window({"context": 2048}, 16384)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: context=2048 is smaller than the run's context window of 16,384 tokens ...
    """
    given = options.get("context")
    if given is None:
        options["context"] = max(window, 16)
    elif isinstance(given, int) and not isinstance(given, bool) and given < window:
        raise click.BadParameter(
            f"context={given} is smaller than the run's context window of {window:,} tokens (--gen-kwargs context, or "
            f"the command's default); the local server could not hold it: give --gen-kwargs context={given} too, or "
            "max_tokens=N for a reply cap alone", param_hint="--model-args")


def write_run_files(folder: Path, run_id: str, summary: dict, samples: list[dict] | None = None) -> Path:
    """``<run>.json`` with the summary and, when ``samples`` is given, ``<run>.samples.jsonl``."""
    from kstp.inference.runlog import log_stem

    folder.mkdir(parents=True, exist_ok=True)
    stem = log_stem(run_id)
    (folder / f"{stem}.json").write_text(dumps(summary) + "\n")
    if samples is not None:
        with open(folder / f"{stem}.samples.jsonl", "w") as handle:
            for row in samples:
                handle.write(dumps(row).replace("\n", " ") + "\n")
    return folder / f"{stem}.json"


def run_truncation(store, run_ids, max_tokens: int | None, context: int | None = None) -> dict:
    """:func:`kstp.inference.runs.run_truncation`, imported when called: the run engine (pandas, the store)
    is not what ``kstp --help`` should pay for."""
    from kstp.inference.runs import run_truncation as stored

    return stored(store, run_ids, max_tokens, context)


def truncation_line(figures: dict) -> str:
    """The summary line of :func:`run_truncation`'s figures.

    >>> truncation_line({"replies": 8, "truncated": 2, "share": 0.25, "maxTokens": 512})
    '2 of 8 replies (25.0%) were cut at max_tokens (512 tokens; finish_reason length)'
    >>> truncation_line({"replies": 8, "truncated": 0, "share": 0.0, "maxTokens": 16384, "context": 16384})
    '0 of 8 replies (0.0%) were cut at the context window (16,384 tokens, prompt plus reply; on a server, its own \
window; finish_reason length)'
    >>> truncation_line({"replies": 2, "truncated": 1, "share": 0.5, "maxTokens": 100, "context": 4096})[:80]
    '1 of 2 replies (50.0%) were cut at max_tokens (100 tokens) or the context window'
    """
    share = f" ({figures['share']:.1%})" if figures.get("share") is not None else ""
    if figures.get("context"):
        cap = (f"max_tokens ({figures['maxTokens']:,} tokens) or "
               if figures.get("maxTokens") and figures["maxTokens"] < figures["context"] else "")
        return (f"{figures['truncated']} of {figures['replies']} replies{share} were cut at {cap}the context window "
                f"({figures['context']:,} tokens, prompt plus reply; on a server, its own window; "
                "finish_reason length)")
    if figures.get("maxTokens") is None:
        return (f"{figures['truncated']} of {figures['replies']} replies{share} were cut at the server's or model's "
                "own limit (max_tokens not sent; finish_reason length)")
    return (f"{figures['truncated']} of {figures['replies']} replies{share} were cut at max_tokens "
            f"({figures['maxTokens']:,} tokens; finish_reason length)")


def report_failures(ctx: click.Context, pending: int, last_failure: str | None, failed: int = 0,
                    truncation: dict | None = None, filtered: int = 0, overflow: int = 0) -> None:
    """After a run's summary: say how many replies were the model's failures and were cut at
    max_tokens; exit 1 if requests are pending.

    ``failed`` replies are stored and counted as incorrect; of them, ``filtered`` were
    stopped by the provider's content filter and ``overflow`` questions had a prompt
    longer than the server's window (said apart). ``truncation`` (the figures of
    :func:`run_truncation`) is printed whenever it is given, zero included, with the way to
    let the cut replies finish when there are any. ``pending`` requests got no reply:
    nothing was stored for them, so they are not counted, the run is incomplete and the
    same command asks them again.
    """
    own = failed - filtered - overflow
    if own:
        message(f"{own} replies are the model's failures (an empty reply, say): recorded with their reason and "
                "counted as incorrect")
    if filtered:
        message(f"{filtered} replies were stopped by the provider's content filter (finish_reason content_filter): "
                "recorded as 'filtered', counted as incorrect, apart from the model's failures")
    if overflow:
        message(f"{overflow} questions have a prompt longer than the server's context window: recorded as "
                "'overflow', counted as incorrect; a server with a larger window (vLLM: --max-model-len) answers "
                "them when the same command runs again")
    if truncation is not None:
        fix = ("; a larger window (--gen-kwargs context=N; on a server, its --max-model-len) and --new-run let "
               "them finish" if truncation.get("context") else
               "; a larger --gen-kwargs max_tokens=N (and --new-run) lets them finish")
        message(truncation_line(truncation) + (fix if truncation["truncated"] else ""))
    if pending:
        message(f"{pending} requests got no reply after the retries ({last_failure or 'not asked'}); the run is "
                "incomplete and they are not counted: re-run the same command to ask them")
        ctx.exit(1)


def metric_name(key: str) -> str:
    """The name a results table gives a summary figure, lm-eval's where it has one.

    >>> metric_name("accuracy"), metric_name("passAt4"), metric_name("majorityAt8"), metric_name("psrMicro")
    ('acc', 'pass@4', 'maj@8', 'psrMicro')
    """
    import re

    if key == "accuracy":
        return "acc"
    if key == "meanSampleAccuracy":
        return "acc (all samples)"
    if found := re.fullmatch(r"(passAt|majorityAt)(\d+)", key):
        return f"{'pass' if found.group(1) == 'passAt' else 'maj'}@{found.group(2)}"
    return key


def results_rows(summaries: list[dict], version: str, higher_is_better: dict | None = None) -> list[dict]:
    """Summaries as lm-eval's results table: one row per figure that has a standard error.

    Columns ``dataset, version, shots, metric, ↑`` (``↑`` higher is better, ``↓`` lower,
    blank unknown), ``value, ±, stderr, n`` (questions). A figure ``X`` is a row where the
    summary holds ``XStderr`` beside it (``meanSampleAccuracy`` aside: with one sample per
    question it is ``acc``, with K it is ``pass@1``).

    >>> rows = results_rows([{"dataset": "toy", "questions": 8, "accuracy": 0.5, "accuracyStderr": 0.189}], "1.0",
    ...                     {"accuracy": True})
    >>> [(r["metric"], r["↑"], r["value"], r["stderr"]) for r in rows]
    [('acc', '↑', 0.5, 0.189)]
    """
    higher = higher_is_better or {}
    rows = []
    for summary in summaries:
        for key, value in summary.items():
            if key.endswith("Stderr") or f"{key}Stderr" not in summary or key == "meanSampleAccuracy":
                continue  # the mean over all samples is pass@1 where it differs from acc
            better = higher.get(key, higher.get("accuracy") if key.startswith(("passAt", "majorityAt", "mean"))
                                else None)
            rows.append({"dataset": summary.get("dataset"), "version": version, "shots": summary.get("shots", 0),
                         "metric": metric_name(key), "↑": {True: "↑", False: "↓"}.get(better, ""), "value": value,
                         "±": "±", "stderr": summary[f"{key}Stderr"], "n": summary.get("questions")})
    return rows
