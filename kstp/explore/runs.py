"""The explorer's run and sample pages: a run's identity, progress and samples; one sample as Inspect shows it.

A mixin of :class:`~kstp.explore.pages.Explorer` (which gives it ``store`` and ``_kept``), kept
apart because runs are their own page family: what ``kstp runs show`` prints, each sample's
verdict, RQEval's dimensions per item and a chain of thought's DAG.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kstp.errors import KstpError, UnknownIdError
from kstp.explore.drawings import cot as _cot
from kstp.explore.pictures import run_pictures
from kstp.explore.values import PAGE_SIZE
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import paged as _page
from kstp.explore.values import plain as _plain

if TYPE_CHECKING:
    from kstp.graph.store import GraphStore

__all__ = ["RunPages", "FILTERS", "RUN_FIGURES"]

#: Sample filters of a run page.
FILTERS = ("all", "wrong", "invalid", "failed")
#: The figures each evaluator puts on its Run, shown beside the headline (Run properties).
RUN_FIGURES = {"answers": ("accuracy", "correct", "failed", "pending"),
               "dagmath": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "cot": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "rqeval": ("cq", "cs", "rs", "ls", "es", "ss"),
               "nextstep": ("exactSetAccuracy", "invalid"),
               "blim": ("structure", "method", "states", "logLikelihood", "g2", "df", "pValue", "aic", "bic")}


class RunPages:
    """The run and sample pages of :class:`~kstp.explore.pages.Explorer`."""

    store: GraphStore  # given by Explorer, as is what its pages keep:
    _kept: Callable[[tuple, Callable[[], Any]], Any]

    def run(self, run_id: str, show: str = "all", page: int = 1, size: int = PAGE_SIZE) -> dict:
        """A run's identity (``kstp runs show``), progress and samples, filtered and paged (``size`` a page)."""
        from kstp.graph.manage import run_footprint

        found = self.store.nodes("Run", [run_id])
        if found.empty:
            raise UnknownIdError(f"unknown run {run_id!r}; kstp runs list names the runs")
        identity = {k: v for k, v in _rows(found)[0].items() if v is not None}
        for key in ("config", "sampling"):
            if isinstance(identity.get(key), str):
                identity[key] = json.loads(identity[key])
        holds = self._kept(("holds", run_id), lambda: run_footprint(self.store, run_id).counts())
        evaluator = identity.get("evaluator", "")
        rows = self._kept(("samples", run_id), lambda: self._samples(run_id, evaluator))
        counts = {f: sum(1 for r in rows if f == "all" or r["kind"] == f or (f == "wrong" and r["kind"] != "right"))
                  for f in FILTERS}
        chosen = show if show in FILTERS else "all"
        kept = [r for r in rows if chosen == "all" or r["kind"] == chosen
                or (chosen == "wrong" and r["kind"] != "right")]
        items = self._kept(("rqeval", run_id), lambda: self._rqeval_items(run_id)) if evaluator == "rqeval" else None
        reasons: dict[str, int] = {}
        for r in rows:
            if r["kind"] in ("failed", "invalid"):
                reason = f"{r['kind']}: {r['error'] or r.get('invalidKind') or r['verdict'] or 'invalid CoT'}"
                reasons[reason] = reasons.get(reason, 0) + 1
        failures = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"run": identity, "holds": holds, "evaluator": evaluator, "filter": chosen, "counts": counts,
                "failures": failures,
                "pictures": self._kept(("run pictures", run_id), lambda: run_pictures(rows, failures)),
                "samples": _page(kept, page, size), "rqevalItems": items,
                "figures": {k: identity[k] for k in RUN_FIGURES.get(evaluator, ()) if k in identity}}

    def _samples(self, run_id: str, evaluator: str) -> list[dict]:
        samples = self.store.frame("run_samples", {"runId": run_id})
        if evaluator == "nextstep":
            stored = self.store.frame("nextstep_responses", {"runId": run_id}).set_index("responseId")
            for column in ("predicted", "reference", "catalogue"):
                samples[column] = samples["responseId"].map(stored[column]) if len(stored) else None
        rows = _rows(samples)
        for row in rows:
            row["kind"] = _sample_kind(row)
        return rows

    def _rqeval_items(self, run_id: str) -> list[dict] | None:
        """RQEval's dimensions per item of a run, from the stored responses (ES needs the whole run: on the run)."""
        from kstp.evaluators.rqeval import dimensions
        from kstp.evaluators.rqeval.results import stored_runs

        try:
            frame = next(iter(stored_runs(self.store, [run_id]).values()))
        except KstpError:
            return None
        out = []
        for qid, row in frame.iterrows():
            out.append({"questionId": qid, "cq": dimensions.correctness([row["correct"]]),
                        "cs": dimensions.consistency([row["answers"]]),
                        "rs": dimensions.robustness([row["correct"]], [row["perturbed"]], int(row["slots"])),
                        "ls": _plain(row["ls"]), "ss": _plain(row["ss"])})
        return out

    def sample(self, response_id: str) -> dict:
        """One sample as Inspect shows it: prompt, completion, extracted answer, verdict and reason, failure."""
        detail = self.store.frame("response_detail", {"responseId": response_id})
        found = self.store.nodes("Response", [response_id])
        if found.empty or detail.empty:
            raise UnknownIdError(f"unknown sample {response_id!r}")
        response = {k: v for k, v in _rows(found)[0].items() if v is not None}
        first = _rows(detail)[0]
        runs = sorted(set(detail["runId"]))
        run = _rows(self.store.nodes("Run", [first["runId"]]))[0]
        page: dict[str, Any] = {"response": response, "detail": first, "runs": runs, "run": run,
                                "prompt": self._prompt(run, first, response), "kind": _sample_kind(response)}
        if response.get("predicted") is not None or response.get("reference") is not None:
            page["fringes"] = {k: _json_list(response.get(k)) for k in ("predicted", "reference")}
        page["elsewhere"] = self._elsewhere(run, first.get("questionId"), response_id)
        steps = self.store.frame("response_steps", {"responseId": response_id})
        if len(steps):
            page["cot"] = _cot(steps)
        return page

    def _elsewhere(self, run: dict, question: str | None, response_id: str) -> list[dict]:
        """The samples of the same question in the other runs of the same dataset (their first sample each)."""
        if not question or not run.get("dataset"):
            return []
        runs = self._kept(("runs by dataset",), lambda: _rows(self.store.nodes("Run")))
        out = []
        for other in runs:
            if other.get("dataset") != run["dataset"] or other["id"] == run["id"]:
                continue
            samples = self._kept(("samples", other["id"]), lambda o=other: self._samples(o["id"], o.get("evaluator")))
            match = next((r for r in samples if r.get("questionId") == question and r["responseId"] != response_id),
                         None)
            if match:
                out.append({"run": other["id"], "evaluator": other.get("evaluator"), "model": other.get("model"),
                            "responseId": match["responseId"], "kind": match["kind"],
                            "extracted": match.get("extracted")})
        return sorted(out, key=lambda r: r["run"])

    def _prompt(self, run: dict, detail: dict, response: dict) -> dict:
        """The prompt messages of an answers sample, rebuilt and checked against the stored prompt hash."""
        if not response.get("promptHash"):
            return {"messages": None, "why": "ingested, not generated: it was never a prompt's reply"}
        if run.get("evaluator") != "answers" or not detail.get("questionText"):
            return {"messages": None, "why": f"{run.get('evaluator')} runs store the prompt's hash only "
                    f"({response['promptHash'][:16]}…)"}
        from kstp.evaluators.answers import PROMPTS, build_prompt, template_hash
        from kstp.inference.backend import prompt_hash

        for name in PROMPTS:
            if template_hash(name) == run.get("promptTemplateHash"):
                messages = build_prompt(detail["questionText"], name)
                if prompt_hash(messages) == response.get("promptHash"):
                    return {"messages": messages, "why": f"rebuilt from the '{name}' prompt set; its hash equals the "
                            "stored one"}
        return {"messages": None, "why": "the prompt could not be rebuilt to its stored hash "
                f"({response.get('promptHash', '?')[:16]}…)"}


def _sample_kind(row: dict) -> str:
    """``failed`` (no completion: an error), ``invalid`` (no usable answer), ``wrong`` or ``right``."""
    if row.get("error"):
        return "failed"
    verdict = str(row.get("verdict") or "")
    if row.get("invalidKind") or verdict in ("no answer found", "unparseable answer", "truncated", "invalid") \
            or verdict.startswith("truncated") or row.get("cotValid") is False:
        return "invalid"
    return "right" if row.get("correct") else "wrong"


def _json_list(value: Any) -> list | None:
    if value is None:
        return None
    if isinstance(value, list):
        return value
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return [value]
    return parsed if isinstance(parsed, list) else [parsed]
