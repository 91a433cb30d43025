"""The explorer's run, sample and two-run diff pages: a run's identity, progress and samples (each beside its
question's text, gold and human share right); one sample as Inspect shows it; two runs as ``kstp runs diff``
compares them.

A mixin of :class:`~kstp.explore.pages.Explorer` (which gives it ``store``, ``_kept``, ``stats``, ``blim``,
``run_psr`` and the dataset reads), kept apart because runs are their own page family: what ``kstp runs
show`` prints, each sample's verdict, RQEval's dimensions per item, a chain of thought's DAG, a BLIM run's
fit and a next-step run's exact sets by prompt condition.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kstp.errors import KstpError, UnknownIdError
from kstp.explore.drawings import cot as _cot
from kstp.explore.pictures import run_pictures
from kstp.explore.values import PAGE_SIZE, human_share
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import paged as _page
from kstp.explore.values import plain as _plain

if TYPE_CHECKING:
    from kstp.graph.store import GraphStore

__all__ = ["RunPages", "FILTERS", "RUN_FIGURES", "sample_kind"]

#: Sample filters of a run page.
FILTERS = ("all", "wrong", "invalid", "failed")
#: The figures each evaluator puts on its Run, shown beside the headline (Run properties).
RUN_FIGURES = {"answers": ("accuracy", "correct", "failed", "pending"),
               "dagmath": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "cot": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "rqeval": ("cq", "cs", "rs", "ls", "es", "ss"),
               "nextstep": ("exactSetAccuracy", "invalid"),
               "blim": ("structure", "method", "states", "logLikelihood", "g2", "df", "pValue", "aic", "bic"),
               "assess": ("learner", "asked", "predictedAccuracy")}


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
        stored = json.loads(identity.pop("figures", None) or "{}")  # what the run's log holds (issue 43)
        holds = self._kept(("holds", run_id), lambda: run_footprint(self.store, run_id).counts())
        evaluator = identity.get("evaluator", "")
        rows = self.samples_of(run_id, evaluator)
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
        facts = self.question_facts(identity.get("dataset"))
        shown = _page(kept, page, size)
        shown["rows"] = [{**r, **facts.get(r.get("questionId") or "", {})} for r in shown["rows"]]
        figures = {k: identity[k] for k in RUN_FIGURES.get(evaluator, ()) if k in identity}
        figures.update({k: v for k, v in stored.items() if k.startswith(("passAt", "majorityAt"))
                        or (k.endswith("Stderr") and v is not None)})
        if stored.get("truncation", {}).get("replies"):
            cut = stored["truncation"]
            figures["truncated"] = f"{cut['truncated']} of {cut['replies']} ({cut['share']:.1%})"
        if evaluator == "answers" or identity.get("psrMicro") is not None:  # "-" where undefined
            figures.update(self.run_psr(identity))
        humans = {q: f["humansShare"] for q, f in facts.items()}
        page_ = {"run": identity, "holds": holds, "evaluator": evaluator, "filter": chosen, "counts": counts,
                 "failures": failures,
                 "pictures": self._kept(("run pictures", run_id), lambda: run_pictures(rows, failures, humans)),
                 "samples": shown, "rqevalItems": items, "figures": figures,
                 "progress": {k: identity[k] for k in ("requested", "completed", "failed", "pending") if k in identity},
                 "others": self._diffable(identity) if any(r.get("questionId") for r in rows) else []}
        if evaluator == "blim" and identity.get("dataset"):
            fit = self.blim(identity["dataset"]) if identity["dataset"] in self._dataset_ids() else None
            page_["blim"] = fit if fit is not None and fit["run"].get("id") == run_id else None
        if evaluator == "nextstep":
            page_["conditions"] = _by_condition(rows)
        return page_

    def _dataset_ids(self) -> set[str]:
        return {row["datasetId"] for row in self.stats()["datasets"]}

    def _diffable(self, run: dict, most: int = 20) -> list[dict]:
        """The other runs on the same dataset whose samples answer questions (a two-run diff page each), the latest
        first, at most ``most``."""
        out = []
        for other in self.run_list():
            if other["id"] == run["id"] or other.get("dataset") != run.get("dataset") or \
                    other.get("evaluator") in ("blim", "nextstep", None):
                continue
            if any(r.get("questionId") for r in self.samples_of(other["id"], other.get("evaluator") or "")):
                out.append({"id": other["id"], "model": other.get("model"), "evaluator": other.get("evaluator"),
                            "startedAt": other.get("startedAt") or ""})
        return sorted(out, key=lambda r: (r["startedAt"], r["id"]), reverse=True)[:most]

    def diff(self, first: str, second: str) -> dict:
        """``kstp runs diff``'s comparison of two runs on the questions both answered: each run's accuracy and PSR,
        McNemar's test of the paired verdicts, the flipped questions.

        Raises
        ------
        UnknownIdError
            When either run is not in the graph.
        InputError
            When they have no question in common.
        """
        from kstp.evaluators.rundiff import diff_runs

        def compute() -> dict:
            result = diff_runs(self.store, first, second)
            return {"first": first, "second": second, "runs": _rows(result.runs),
                    "mcnemar": {k: _plain(v) for k, v in result.mcnemar.items()},
                    "flipped": _rows(result.flipped)}

        return self._kept(("diff", first, second), compute)

    def question_facts(self, dataset: str | None) -> dict[str, dict]:
        """Per question of ``dataset``: ``questionText``, ``gold`` and ``humansShare`` (the share of human learners
        who answered it right; None: none did), what a run's samples table shows beside each sample (kept; empty
        for a run on no dataset in the graph)."""
        def compute() -> dict[str, dict]:
            known = {row["datasetId"] for row in self.stats()["datasets"]}
            if dataset not in known:
                return {}
            questions = self._questions(dataset)
            counts = self.question_index(dataset)["counts"]
            return {q: {"questionText": text, "gold": gold, "humansShare": human_share(counts.get(q, {}))[2]}
                    for q, text, gold in zip(questions["questionId"], questions["text"], questions["answer"],
                                             strict=True)}

        return self._kept(("question facts", dataset), compute)

    def run_list(self) -> list[dict]:
        """Every Run node's properties (kept)."""
        return self._kept(("runs by dataset",), lambda: _rows(self.store.nodes("Run")))

    def samples_of(self, run_id: str, evaluator: str) -> list[dict]:
        """A run's samples (``run_samples``) with each one's kind (:func:`sample_kind`) (kept)."""
        return self._kept(("samples", run_id), lambda: self._samples(run_id, evaluator))

    def _samples(self, run_id: str, evaluator: str) -> list[dict]:
        samples = self.store.frame("run_samples", {"runId": run_id})
        if evaluator == "nextstep":
            stored = self.store.frame("nextstep_responses", {"runId": run_id}).set_index("responseId")
            for column in ("predicted", "reference", "catalogue"):
                samples[column] = samples["responseId"].map(stored[column]) if len(stored) else None
        rows = _rows(samples)
        for row in rows:
            row["kind"] = sample_kind(row)
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
                                "prompt": self._prompt(run, first, response), "kind": sample_kind(response)}
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
        out = []
        for other in self.run_list():
            if other.get("dataset") != run["dataset"] or other["id"] == run["id"]:
                continue
            samples = self.samples_of(other["id"], other.get("evaluator") or "")
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


def _by_condition(rows: list[dict]) -> list[dict]:
    """A next-step run's samples by prompt condition: samples, exact sets (``correct``), invalid answers and the
    exact-set accuracy (invalid ones count as not exact, as in the run's figure).

    >>> _by_condition([{"condition": "P0", "correct": True, "kind": "right"},
    ...                {"condition": "P0", "correct": False, "kind": "invalid"}])
    [{'condition': 'P0', 'samples': 2, 'exact': 1, 'invalid': 1, 'exactSetAccuracy': 0.5}]
    """
    by: dict[str, list[dict]] = {}
    for row in rows:
        by.setdefault(row.get("condition") or "-", []).append(row)
    return [{"condition": c, "samples": len(v), "exact": sum(bool(r.get("correct")) for r in v),
             "invalid": sum(r["kind"] == "invalid" for r in v),
             "exactSetAccuracy": sum(bool(r.get("correct")) for r in v) / len(v)} for c, v in sorted(by.items())]


def sample_kind(row: dict) -> str:
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
