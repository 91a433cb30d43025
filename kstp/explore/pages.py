"""What each page of ``kstp explore`` shows, gathered from the graph (no HTML here).

Every figure comes from what the commands use: ``kstp db stats`` (:func:`~kstp.graph.manage.graph_stats`),
``kstp runs list`` and ``runs show`` (:mod:`kstp.graph.manage`), ``kstp kst space``, ``fringe`` and
``check`` (:mod:`kstp.graph.structures`, :class:`~kstp.kst.spaces.KnowledgeSpace`), ``kstp kst
depth`` (:func:`~kstp.graph.gds.concept_depth`), ``kstp kst next-steps``
(:func:`~kstp.evaluators.blim.next_steps`), ``kstp evaluate psr`` (:func:`~kstp.evaluators.psr.evaluate_dataset`
without writing back) and the registered queries, so a page shows what the command prints.
Assumes a graph opened read-only that does not change while the explorer runs: figures that
take a while on a large graph (dataset sizes, knowledge space counts, concept depths, the
PSR distribution) are computed once per process and kept.

Each page is a dict of plain values (and DataFrames' records) for a template; ids travel
in URLs as :func:`slug` s, so every page has a stable address that is also a file name of
the static export.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kstp.errors import KstpError, UnknownIdError
from kstp.explore.layout import Drawing, layered
from kstp.explore.readonly import AD_HOC_TIMEOUT_S
from kstp.graph.store import GraphStore, records

__all__ = ["Explorer", "slug", "unslug", "PAGE_SIZE", "DRAW_LIMIT", "HASSE_LIMIT", "PSR_INLINE_ANSWERS"]

#: Rows per page of a table.
PAGE_SIZE = 50
#: Most nodes a drawn graph holds; beyond it a neighbourhood is cut at a depth the user raises.
DRAW_LIMIT = 250
#: Most states a Hasse diagram is drawn for.
HASSE_LIMIT = 400
#: States that counting a knowledge space may enumerate (``kstp kst space``'s limit).
COUNT_LIMIT = 10**7
#: Without a BLIM fit, next steps come from the knowledge space when it has at most this many states.
NEXT_STEPS_LIMIT = 20_000
#: Datasets with at most this many answers get their PSR distribution on the dataset page; larger
#: ones on a page of their own (it reads every answer: seconds at XES3G5M scale).
PSR_INLINE_ANSWERS = 500_000
#: Most rows an ad-hoc statement returns (a LIMIT is added where it has none).
AD_HOC_ROWS = 1000
#: How the query form's boolean fields read (typed as text; left empty: false).
FORM_BOOLEANS = {**{t: True for t in ("true", "1", "yes", "on")}, **{f: False for f in ("false", "0", "no", "off", "")}}
#: Q-matrix rows per page.
QMATRIX_PAGE = 200
#: Most of a learner's missing prerequisites listed (they are counted in full).
MISSING_SHOWN = 200
#: Learner-table columns a user may sort by.
SORTABLE = ("learnerId", "kind", "nAnswered", "accuracy", "psrMicro", "psrMacro", "blimPosterior")
#: Sample filters of a run page.
FILTERS = ("all", "wrong", "invalid", "failed")
#: The figures each evaluator puts on its Run, shown beside the headline (Run properties).
RUN_FIGURES = {"answers": ("accuracy", "correct", "failed", "pending"),
               "dagmath": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "cot": ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat"),
               "rqeval": ("cq", "cs", "rs", "ls", "es", "ss"),
               "nextstep": ("exactSetAccuracy", "invalid"),
               "blim": ("structure", "method", "states", "logLikelihood", "g2", "df", "pValue", "aic", "bic")}

#: Drawn labels: characters a line holds before it wraps, the width one takes and a line's height (11 px
#: text, SVG units); the smallest box; a Hasse diagram's dot radius.
LINE_CHARS, CHAR_W, LINE_H = 18, 7, 14
BOX = (100, 32)
DOT_R = 9
#: What a mark on a learner's structure says of a question (a mixed box's tooltip, a line each).
VERDICTS = {"correct": "answered right", "wrong": "answered wrong", "inner": "inner fringe (learnt last)",
            "outer": "outer fringe (ready to learn)", "": "not answered"}

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


#: Longest slug, in bytes: a file name of ``SLUG_BYTES`` plus ``.html`` fits a file system's 255.
SLUG_BYTES = 200
#: The ids of the shortened slugs made in this process (a shortened slug cannot be read back).
_SHORTENED: dict[str, str] = {}


def slug(identifier: str) -> str:
    """An id as one URL path segment and file name: bytes outside ``[A-Za-z0-9._-]`` as ``~XX``.

    Browsers and servers leave ``~`` as it is, so the same text is the page's address on
    the server and its file name in the export. A slug past :data:`SLUG_BYTES` (a learner
    id of 29 CJK characters is 261 bytes of slug) is cut and ends in ``~~`` and 16 hex
    digits of the id's SHA-256; :func:`unslug` reads it back in the process that made it
    (the pages that link to it).

    >>> slug("frcsub:Item04"), slug("a'b\\"c")
    ('frcsub~3AItem04', 'a~27b~22c')
    >>> unslug(slug("é/x y"))
    'é/x y'
    >>> long = "toy:" + "学" * 29
    >>> len(slug(long)), unslug(slug(long)) == long
    (198, True)
    """
    text = "".join(chr(b) if chr(b) in _SAFE else f"~{b:02X}" for b in identifier.encode())
    if len(text) <= SLUG_BYTES:
        return text
    digest = hashlib.sha256(identifier.encode()).hexdigest()[:16]
    cut = text[:SLUG_BYTES - 18]
    cut = cut[:cut.rfind("~")] if "~" in cut[-2:] else cut  # never half of a ~XX
    short = f"{cut}~~{digest}"
    _SHORTENED[short] = identifier
    return short


def unslug(text: str) -> str:
    """The id of a :func:`slug`.

    Raises
    ------
    UnknownIdError
        When ``text`` is no slug (a stray ``~``), or a shortened slug this process did not make.
    """
    if "~~" in text:
        if text not in _SHORTENED:
            raise UnknownIdError(f"no page at {text!r} (a shortened address: open it from a page that links to it)")
        return _SHORTENED[text]
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "~":
            try:
                out.append(int(text[i + 1:i + 3], 16))
            except ValueError:
                raise UnknownIdError(f"no page at {text!r}") from None
            i += 3
        else:
            out += text[i].encode()
            i += 1
    return out.decode(errors="replace")


def _plain(value: Any) -> Any:
    """A cell as a JSON-ready value: NaN and NA as None, numpy scalars as Python."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    return value.item() if hasattr(value, "item") else value


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _plain(v) for k, v in row.items()} for row in records(frame)]


def _page(rows: list | pd.DataFrame, page: int, size: int = PAGE_SIZE) -> dict:
    size = max(size, 1)
    pages = max(1, math.ceil(len(rows) / size))
    page = min(max(page, 1), pages)
    part = rows.iloc[(page - 1) * size:page * size] if isinstance(rows, pd.DataFrame) else \
        rows[(page - 1) * size:page * size]
    return {"rows": part, "page": page, "pages": pages, "total": len(rows)}


class Explorer:
    """The pages of one graph.

    Parameters
    ----------
    store : GraphStore
        The graph, opened read-only.
    where : str
        How the graph is named to the user (``ladybug:/abs/path``, the Neo4j URI).
    query_timeout_s : float
        Seconds an ad-hoc statement may run (:data:`AD_HOC_TIMEOUT_S`).

    Notes
    -----
    One store is used by one thread at a time (a lock), so the server may run page
    functions in its worker threads. Ad-hoc statements run outside the lock, on a
    connection of their own where the engine has connections, under ``query_timeout_s``:
    a slow one holds up no other page. :meth:`refresh` before a page shows the graph as
    it is then: what another process wrote since is read (the embedded graph reopened),
    and what the pages keep is computed again.
    """

    def __init__(self, store: GraphStore, where: str, query_timeout_s: float = AD_HOC_TIMEOUT_S):
        self.store = store
        self.where = where
        self.query_timeout_s = query_timeout_s
        self._lock = threading.RLock()
        self._stamp = store.stamp()
        self._running = 0  # ad-hoc statements in flight: the store is not reopened under them
        #: When the pages' data was read (HH:MM:SS, local time), shown in their footer.
        self.read_at = time.strftime("%H:%M:%S")
        self._cache: dict[tuple, Any] = {}

    def _kept(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    def locked(self):
        """The lock to hold while a page reads the graph."""
        return self._lock

    def refresh(self) -> bool:
        """Read the graph anew if another process changed it since (:meth:`GraphStore.stamp`); whether it did.

        The embedded graph is reopened (a read-only Ladybug handle keeps the state it was opened
        on), unless an ad-hoc statement is running on it (the next page does it); what the
        pages keep is dropped either way.
        """
        with self._lock:
            stamp = self.store.stamp()
            if stamp == self._stamp or self._running:
                return False
            self.store.reopen()
            self._stamp = self.store.stamp()
            self._cache.clear()
            self.read_at = time.strftime("%H:%M:%S")
            return True

    def interrupt(self) -> None:
        """Stop the ad-hoc statements running now (the server is stopping)."""
        self.store.interrupt()

    # ---- shared figures ------------------------------------------------------------------
    def stats(self) -> dict:
        """``kstp db stats``'s figures (kept)."""
        from kstp.graph.manage import graph_stats

        return self._kept(("stats",), lambda: graph_stats(self.store))

    def _dataset_row(self, dataset: str) -> dict:
        for row in self.stats()["datasets"]:
            if row["datasetId"] == dataset:
                return row
        known = ", ".join(r["datasetId"] for r in self.stats()["datasets"]) or "none"
        raise UnknownIdError(f"unknown dataset {dataset!r}; datasets in the graph: {known}")

    def learner_figures(self, dataset: str) -> pd.DataFrame:
        """The ``dataset_learner_figures`` rows of a dataset (kept)."""
        return self._kept(("learners", dataset), lambda: self.store.frame(
            "dataset_learner_figures", {"dataset": dataset}).sort_values("learnerId", ignore_index=True))

    def stored_psr(self, dataset: str) -> dict | None:
        """Mean accuracy and PSR of the dataset's human learners as the last ``kstp evaluate psr`` stored them."""
        learners = self.learner_figures(dataset)
        humans = learners[learners["kind"] == "human"]
        if humans.empty or humans["accuracy"].isna().all():
            return None
        return {"learners": len(humans), "accuracy": _plain(humans["accuracy"].astype(float).mean()),
                "psrMicro": _plain(humans["psrMicro"].astype(float).mean()),
                "psrMacro": _plain(humans["psrMacro"].astype(float).mean())}

    def space_size(self, dataset: str) -> dict:
        """``kstp kst space``'s count of the dataset's knowledge space, or its lower bound where it is too large (kept).

        Returns ``{"items", "classes", "states"}`` or ``{"atLeast": "2^k", "reason"}``.
        """
        def compute() -> dict:
            from kstp.graph.structures import dataset_space
            from kstp.kst.spaces import TooManyStatesError

            try:
                space = dataset_space(self.store, dataset, COUNT_LIMIT)
                return {"items": len(space.items), "classes": len(space.classes), "states": space.count(COUNT_LIMIT)}
            except TooManyStatesError as exc:
                return {"tooMany": str(exc)}

        return self._kept(("space", dataset), compute)

    def space(self, dataset: str):
        """The dataset's :class:`~kstp.kst.spaces.KnowledgeSpace`, where it is small enough to draw (else None)."""
        size = self.space_size(dataset)
        if size.get("states") is None or size["states"] > HASSE_LIMIT and size["items"] > DRAW_LIMIT:
            return None
        from kstp.graph.structures import dataset_space

        return self._kept(("space object", dataset), lambda: dataset_space(self.store, dataset, COUNT_LIMIT))

    # ---- overview ------------------------------------------------------------------------
    def overview(self) -> dict:
        """Frameworks, datasets, learners by kind and every run with its headline figures."""
        from kstp.graph.manage import list_runs

        stats = self.stats()
        runs = _rows(list_runs(self.store))
        stored = self.store.nodes("Run")
        figures = {r["id"]: r for r in _rows(stored)} if len(stored) else {}
        from kstp.inference.runs import model_learner_id

        models = {run["model"]: model_learner_id(run["model"]) for run in runs
                  if run["evaluator"] == "answers" and run["model"]}
        found = self.store.nodes("Learner", list(models.values())) if models else pd.DataFrame()
        psr = {r["id"]: r for r in _rows(found)} if len(found) else {}
        for run in runs:
            record = figures.get(run["runId"], {})
            run["figures"] = {k: record.get(k) for k in RUN_FIGURES.get(run["evaluator"], ())
                              if record.get(k) is not None}
            learner = psr.get(models.get(run["model"], ""), {})
            for key in ("psrMicro", "psrMacro"):  # the model's PSR as kstp evaluate psr last stored it
                if run["evaluator"] == "answers" and learner.get(key) is not None:
                    run["figures"][key] = learner[key]
        datasets = []
        for row in stats["datasets"]:
            datasets.append({**row, "psr": self.stored_psr(row["datasetId"]) if row["answers"] else None})
        return {"where": self.where, "engine": self.store.engine, "nodes": stats["nodes"],
                "relationships": stats["relationships"], "frameworks": stats["frameworks"], "datasets": datasets,
                "kinds": self.store.run("learner_kinds"), "runs": runs}

    # ---- curriculum ----------------------------------------------------------------------
    def framework(self, framework: str) -> dict:
        """A framework's figures and its domains, clusters and concepts."""
        figures = next((f for f in self.stats()["frameworks"] if f["framework"] == framework), None)
        if figures is None:
            known = ", ".join(f["framework"] for f in self.stats()["frameworks"]) or "none"
            raise UnknownIdError(f"unknown framework {framework!r}; frameworks in the graph: {known}")
        outline = self.store.frame("framework_outline", {"framework": framework})
        concepts = self.store.nodes("Concept", self.store.frame("framework_concepts", {"framework": framework})
                                    ["conceptId"].tolist())
        clustered = set(outline["conceptId"])
        domains: dict[str, dict] = {}
        for row in _rows(outline):
            domain = domains.setdefault(row["domainName"] or "(no domain)", {"name": row["domainName"] or "(no domain)",
                                                                            "grade": row["grade"], "clusters": {}})
            cluster = domain["clusters"].setdefault(row["clusterId"], {"id": row["clusterId"],
                                                                       "name": row["clusterName"], "concepts": []})
            cluster["concepts"].append({"id": row["conceptId"], "code": row["code"], "description": row["description"]})
        loose = [{"id": r["id"], "code": r["code"], "description": r["description"]}
                 for r in _rows(concepts) if r["id"] not in clustered]
        return {"framework": framework, "figures": figures,
                "domains": [{**d, "clusters": list(d["clusters"].values())} for d in domains.values()],
                "loose": loose}

    def depths(self, framework: str) -> dict[str, int]:
        """``kstp kst depth``: each concept's longest prerequisite chain (kept)."""
        from kstp.graph.gds import concept_depth

        return self._kept(("depth", framework), lambda: dict(zip(*concept_depth(self.store, framework).
                                                                 to_dict("list").values(), strict=True)))

    def _framework_edges(self, framework: str) -> pd.DataFrame:
        return self._kept(("concept edges", framework),
                          lambda: self.store.frame("concept_prerequisites", {"framework": framework}))

    def concept(self, concept: str, depth: int = 2) -> dict:
        """A concept, its prerequisite neighbourhood to ``depth`` edges each way (a layered DAG) and its questions."""
        found = self.store.nodes("Concept", [concept])
        if found.empty:
            raise UnknownIdError(f"unknown concept {concept!r}; concepts are named <framework>:<id>, e.g. ccss:142")
        record = _rows(found)[0]
        framework = record["framework"]
        edges = self._framework_edges(framework)
        up: dict[str, list[str]] = {}
        down: dict[str, list[str]] = {}
        for a, b in zip(edges["fromId"], edges["toId"], strict=True):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
        ancestors, descendants = _reach(concept, up, depth), _reach(concept, down, depth)
        every_ancestor, every_descendant = _reach(concept, up, None), _reach(concept, down, None)
        shown = [concept, *sorted(ancestors), *sorted(descendants)]
        if len(shown) > DRAW_LIMIT:  # cut at the depth that still fits
            while depth > 1 and len(shown) > DRAW_LIMIT:
                depth -= 1
                ancestors, descendants = _reach(concept, up, depth), _reach(concept, down, depth)
                shown = [concept, *sorted(ancestors), *sorted(descendants)]
        keep = set(shown)
        sub = [(a, b) for a, b in zip(edges["fromId"], edges["toId"], strict=True) if a in keep and b in keep]
        depths = self.depths(framework)
        info = self.store.nodes("Concept", shown)
        labels = {r["id"]: {"code": r["code"], "description": r["description"]} for r in _rows(info)}
        drawing = layered(shown, sub, {n: depths[n] for n in shown} if all(n in depths for n in shown) else None,
                          sizes=_sizes(shown, labels))
        questions = _rows(self.store.frame("concept_questions", {"conceptId": concept}))
        return {"concept": record, "depth": depth, "conceptDepth": depths.get(concept),
                "ancestors": len(every_ancestor), "descendants": len(every_descendant),
                "shownAncestors": len(ancestors), "shownDescendants": len(descendants),
                "deeper": len(ancestors) < len(every_ancestor) or len(descendants) < len(every_descendant),
                "drawing": _svg(drawing, labels, "concept", focus=concept,
                                title=lambda n: f"{labels[n]['code']}: {labels[n]['description'] or ''}"
                                f" (depth {depths.get(n, '?')})"),
                "questions": questions[:100], "questionCount": len(questions)}

    # ---- datasets ------------------------------------------------------------------------
    def dataset(self, dataset: str, sort: str = "learnerId", descending: bool = False, page: int = 1,
                size: int = PAGE_SIZE, qpage: int = 1, qsize: int = QMATRIX_PAGE) -> dict:
        """A dataset: figures, Q-matrix, prerequisite DAG, space size, Hasse diagram, PSR, BLIM, learners
        (``size`` of them from ``page``, sorted by ``sort``; ``qsize`` Q-matrix rows from ``qpage``)."""
        row = self._dataset_row(dataset)
        counted = self.space_size(dataset)
        drawings = self._kept(("drawings", dataset), lambda: self._drawings(dataset, counted))
        psr = self.psr(dataset) if 0 < row["answers"] <= PSR_INLINE_ANSWERS else None
        column = sort if sort in SORTABLE else "learnerId"
        ordered = self._kept(("order", dataset, column, descending), lambda: self.learner_figures(dataset).sort_values(
            [column, "learnerId"], ascending=[not descending, True], na_position="last", kind="stable"))
        learners = _page(ordered, page, size)
        learners["rows"] = _rows(learners["rows"])  # only the rows shown become dicts (18 k at XES3G5M scale)
        return {"dataset": row, "qmatrix": _page(self._qmatrix(dataset), qpage, qsize), "space": counted,
                **drawings, "psr": psr, "storedPsr": self.stored_psr(dataset),
                "psrInline": row["answers"] <= PSR_INLINE_ANSWERS,
                "contradicted": self._kept(("contradicted", dataset), lambda: _rows(self.store.frame(
                    "contradicted_prerequisites", {"dataset": dataset}))),
                "blim": self.blim(dataset), "learners": learners, "sort": column, "descending": descending}

    def _qmatrix(self, dataset: str) -> list[dict]:
        def compute() -> list[dict]:
            questions = self._questions(dataset)
            links = self.store.frame("question_concepts", {"dataset": dataset})
            concepts_of = links.groupby("questionId")["conceptId"].apply(list).to_dict() if len(links) else {}
            return [{"id": q, "localId": local, "concepts": concepts_of.get(q, [])}
                    for q, local in zip(questions["questionId"], questions["localId"], strict=True)]

        return self._kept(("qmatrix", dataset), compute)

    def _questions(self, dataset: str) -> pd.DataFrame:
        return self._kept(("questions", dataset), lambda: self.store.frame("dataset_questions", {"dataset": dataset}))

    def _drawings(self, dataset: str, counted: dict) -> dict:
        """The question prerequisite DAG and the Hasse diagram, where the space is small enough to draw."""
        space = self.space(dataset) if "states" in counted else None
        dag = hasse = None
        if space is not None and len(space.classes) <= DRAW_LIMIT:
            dag = _class_dag(space, _local_names(self._questions(dataset)))
        if space is not None and counted["states"] <= HASSE_LIMIT:
            hasse = _hasse(space, dataset)
        return {"dag": dag, "hasse": hasse}

    def warm(self, progress: Callable[[str], None] | None = None) -> None:
        """Compute what pages keep (figures, sizes, depths, drawings; the PSR of small datasets) before serving,
        so that no visitor waits for it."""
        self.overview()  # its queries and modules, once
        for framework in self.stats()["frameworks"]:
            if progress:
                progress(f"framework {framework['framework']}")
            self.depths(framework["framework"])
            self._framework_edges(framework["framework"])
        for row in self.stats()["datasets"]:
            dataset = row["datasetId"]
            if progress:
                progress(f"dataset {dataset}")
            self.dataset(dataset)
            self._kept(("fitted", dataset), lambda d=dataset: self._fitted(d))

    def psr(self, dataset: str) -> dict:
        """``kstp evaluate psr --dataset D``'s rows (not written back) and each learner's figures (kept)."""
        def compute() -> dict:
            from kstp.evaluators.psr import BUCKETS, evaluate_dataset

            result = evaluate_dataset(self.store, dataset, write_back=False)
            return {"summary": [{k: _plain(v) for k, v in r.items()} for r in result.summary()],
                    "buckets": list(BUCKETS)}

        self._dataset_row(dataset)
        return self._kept(("psr", dataset), compute)

    def blim(self, dataset: str) -> dict | None:
        """The dataset's latest BLIM fit: the run's figures, β and η per question, the likeliest states (kept)."""
        return self._kept(("blim", dataset), lambda: self._blim(dataset))

    def _fitted(self, dataset: str) -> bool:
        return self.blim(dataset) is not None

    def _blim(self, dataset: str) -> dict | None:
        items = self.store.frame("blim_item_parameters", {"dataset": dataset})
        if items.empty:
            return None
        run_id = items["runId"].iloc[0]
        run = _rows(self.store.nodes("Run", [run_id]))
        states = self.store.frame("blim_states", {"runId": run_id})
        members = states.dropna(subset=["questionId"]).groupby("stateId")["questionId"].apply(sorted).to_dict()
        probability = states.drop_duplicates("stateId").set_index("stateId")["probability"]
        top = [{"stateId": s, "probability": _plain(p), "state": members.get(s, [])}
               for s, p in probability.sort_values(ascending=False, kind="stable").head(20).items()]
        return {"run": run[0] if run else {"id": run_id}, "questions": _rows(items), "states": top,
                "stateCount": len(probability)}

    # ---- learners ------------------------------------------------------------------------
    def learner(self, learner: str) -> dict:
        """A learner's answers per dataset: knowledge state, fringes, BLIM next steps, contradicted prerequisites."""
        found = self.store.nodes("Learner", [learner])
        if found.empty:
            raise UnknownIdError(f"unknown learner {learner!r}; learners are named <dataset>:<id>, e.g. "
                                 "frcsub:Subject001")
        answers = self.store.frame("learner_answers", {"learnerId": learner})
        sections = [self._learner_in(learner, dataset, group)
                    for dataset, group in answers.groupby("datasetId", sort=True)]
        return {"learner": _rows(found)[0], "datasets": sections}

    def _learner_in(self, learner: str, dataset: str, answers: pd.DataFrame) -> dict:
        from kstp.graph import structures

        state = structures.knowledge_state(self.store, dataset, learner)
        # check_state's query, read as a frame: an incoherent learner of a large relation lacks 10^5 pairs
        missing = self.store.frame("state_violations", {"dataset": dataset, "questionIds": state})
        violations = not missing.empty
        wrong = set(answers.loc[~answers["correct"].fillna(False).astype(bool), "questionId"])
        missing["answered"] = missing["prerequisiteId"].isin(wrong)
        missing = missing.sort_values(["answered", "questionId", "prerequisiteId"], ascending=[False, True, True],
                                      kind="stable")  # answered wrongly first: the stronger evidence
        contradicted = _rows(missing.head(MISSING_SHOWN))
        section: dict[str, Any] = {"dataset": dataset, "answers": _rows(answers), "state": state,
                                   "isState": not violations, "contradicted": contradicted[:MISSING_SHOWN],
                                   "missing": len(missing), "missingAnswered": int(missing["answered"].sum()),
                                   "correct": int(answers["correct"].fillna(False).astype(bool).sum())}
        if not violations:
            section["innerFringe"] = structures.inner_fringe(self.store, dataset, state)
            section["outerFringe"] = structures.outer_fringe(self.store, dataset, state)
        size = self.space_size(dataset)
        fitted = self._kept(("fitted", dataset), lambda: self._fitted(dataset))
        if fitted or size.get("states", NEXT_STEPS_LIMIT + 1) <= NEXT_STEPS_LIMIT:
            from kstp.evaluators.blim import next_steps

            try:
                section["nextSteps"] = next_steps(self.store, dataset, learner, NEXT_STEPS_LIMIT)
            except KstpError as exc:
                section["nextStepsError"] = str(exc)
        else:
            section["nextStepsError"] = (f"no BLIM fit on {dataset} (kstp fit blim), and its knowledge space is too "
                                         "large to match the answers to its nearest states")
        space = self.space(dataset)
        if space is not None and len(space.classes) <= DRAW_LIMIT:
            questions = self._questions(dataset)
            marks = {q: "correct" for q in state} | {q: "wrong" for q in wrong}
            for q in section.get("outerFringe", []):
                marks[q] = "outer"
            for q in section.get("innerFringe", []):
                marks[q] = "inner"
            section["drawing"] = _class_dag(space, _local_names(questions), marks)
        return section

    # ---- runs ----------------------------------------------------------------------------
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
        return {"run": identity, "holds": holds, "evaluator": evaluator, "filter": chosen, "counts": counts,
                "failures": sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])),
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
        steps = self.store.frame("response_steps", {"responseId": response_id})
        if len(steps):
            page["cot"] = _cot(steps)
        return page

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

    # ---- queries -------------------------------------------------------------------------
    def queries(self) -> list[dict]:
        """The registered queries with their parameters (``kstp query --list``) that this engine can run."""
        from kstp.graph.queries import registry

        return [{"name": q.name, "area": q.area, "params": q.params, "returns": list(q.returns),
                 "description": q.description}
                for q in sorted(registry().values(), key=lambda q: (q.area, q.name))
                if self.store.engine in q.engines and not q.name.startswith(("gds_", "vector_"))]

    def query(self, name: str, given: dict[str, str]) -> dict:
        """Run a registered query with parameters typed as text (``kstp query``'s parsing); its rows."""
        from kstp.graph.queries import get_query

        spec = get_query(name)
        if not given:
            return {"query": spec, "given": {}, "rows": None, "columns": list(spec.returns)}
        values = {key: spec.parse_param(key, given.get(key, ""), FORM_BOOLEANS) for key in spec.params}
        spec.check_params(values)
        with self._lock:
            frame = self.store.frame(name, values)
        return {"query": spec, "given": given, "rows": _rows(frame), "columns": list(frame.columns)}

    def cypher(self, text: str) -> dict:
        """Run a read-only ad-hoc statement (:func:`~kstp.explore.readonly.check_read_only` first), under the
        time limit and outside the lock (see the class notes); call it without holding :meth:`locked`."""
        from kstp.explore.readonly import check_read_only, limited

        statement = limited(check_read_only(text), AD_HOC_ROWS + 1)
        with self._lock:
            self._running += 1
        try:
            frame = self.store.read_statement(statement, timeout_s=self.query_timeout_s)
        finally:
            with self._lock:
                self._running -= 1
        return {"rows": _rows(frame.head(AD_HOC_ROWS)), "columns": list(frame.columns),
                "more": len(frame) > AD_HOC_ROWS}


def _reach(start: str, neighbours: dict[str, list[str]], depth: int | None) -> set[str]:
    """Nodes within ``depth`` steps of ``start`` (every reachable one for None), ``start`` left out."""
    seen, frontier, steps = {start}, [start], 0
    while frontier and (depth is None or steps < depth):
        frontier = [n for f in frontier for n in neighbours.get(f, []) if n not in seen]
        seen.update(frontier)
        steps += 1
    return seen - {start}


def _local_names(questions: pd.DataFrame) -> dict[str, str]:
    return dict(zip(questions["questionId"], questions["localId"].fillna(questions["questionId"]), strict=True))


def _class_dag(space, names: dict[str, str], marks: dict[str, str] | None = None) -> dict:
    """The question prerequisite relation drawn as its transitive reduction on classes of equally
    informative questions (the space's cover relation), each on its level.

    A class whose questions carry different ``marks`` (one answered right, one wrong) is marked
    ``mixed`` and drawn split, a part per question in its order; its tooltip gives each one's verdict.
    """
    nodes = [" = ".join(c) for c in space.classes]
    edges = [(nodes[b], nodes[k]) for k in range(len(nodes)) for b in _bits(space.cover[k])]
    labels = {n: {"code": " = ".join(names.get(q, q) for q in c)} for n, c in zip(nodes, space.classes, strict=True)}
    drawing = layered(nodes, edges, {n: space.level[k] for k, n in enumerate(nodes)}, sizes=_sizes(nodes, labels))
    classes = {n: c for n, c in zip(nodes, space.classes, strict=True)}
    verdicts = {n: [(marks or {}).get(q, "") for q in classes[n]] for n in nodes}
    mark = {n: v[0] if len(set(v)) == 1 else "mixed" for n, v in verdicts.items()}
    parts = {n: v for n, v in verdicts.items() if mark[n] == "mixed"}

    def title(n: str) -> str:
        if marks is None:
            return ", ".join(classes[n])
        return "\n".join(f"{q}: {VERDICTS[m]}" for q, m in zip(classes[n], verdicts[n], strict=True))

    return _svg(drawing, labels, None, marks=mark, title=title, parts=parts,
                anchors={n: f"q-{slug(classes[n][0])}" for n in nodes})


def _bits(mask: int) -> list[int]:
    out, k = [], 0
    while mask:
        if mask & 1:
            out.append(k)
        mask >>= 1
        k += 1
    return out


def _hasse(space, dataset: str) -> dict:
    """The Hasse diagram of a knowledge space: states by number of notions, an edge where one notion is added;
    each state with its inner and outer fringe (``kstp kst space --enumerate``'s reading)."""
    masks, inner, outer = space.fringes("standard", HASSE_LIMIT)
    masks = [int(m) for m in masks]
    states = space.item_sets(masks)
    inner_sets, outer_sets = space.item_sets(inner), space.item_sets(outer)
    index = {m: i for i, m in enumerate(masks)}
    names = [f"s{i}" for i in range(len(masks))]
    edges = []
    for i, m in enumerate(masks):
        for k in range(len(space.classes)):
            bit = 1 << k
            if not m & bit and (space.below[k] & ~m) == 0 and (m | bit) in index:
                edges.append((names[i], names[index[m | bit]]))
    drawing = layered(names, edges, {n: bin(m).count("1") for n, m in zip(names, masks, strict=True)},
                      x_step=26, y_step=56, sizes={n: (2 * DOT_R, 2 * DOT_R) for n in names})
    drawing.round = True
    info = []
    for name, state, i_set, o_set in zip(names, states, inner_sets, outer_sets, strict=True):
        info.append({"node": name, "state": sorted(state), "inner": sorted(i_set), "outer": sorted(o_set)})
    by_node = {d["node"]: d for d in info}
    short = {q: q.split(":", 1)[-1] for q in space.items}

    def title(n: str) -> str:
        d = by_node[n]
        return (f"{{{', '.join(short[q] for q in d['state'])}}}\ninner fringe: "
                f"{', '.join(short[q] for q in d['inner']) or '-'}\nouter fringe: "
                f"{', '.join(short[q] for q in d['outer']) or '-'}")

    labels = {d["node"]: {"code": str(len(d["state"]))} for d in info}
    svg = _svg(drawing, labels, None, title=title, small=True,
               data={d["node"]: {"state": " ".join(short[q] for q in d["state"]),
                                 "inner": " ".join(short[q] for q in d["inner"]),
                                 "outer": " ".join(short[q] for q in d["outer"])} for d in info})
    return {**svg, "states": len(masks)}


def _cot(steps: pd.DataFrame) -> dict:
    """A trajectory's steps and its DAG, parents above children, unclosed steps marked (DAG-MATH, Def. 3.1)."""
    rows = _rows(steps)
    by_step: dict[int, dict] = {}
    for row in rows:
        step = by_step.setdefault(row["stepId"], {**{k: row[k] for k in ("stepId", "position", "node", "edge",
                                                                          "final", "closed")}, "parents": []})
        if row["parentStepId"] is not None:
            step["parents"].append(int(row["parentStepId"]))  # a column with nulls arrives as floats
    ordered = sorted(by_step.values(), key=lambda s: (s["position"], s["stepId"]))
    names = [str(s["stepId"]) for s in ordered]
    edges = [(str(p), str(s["stepId"])) for s in ordered for p in s["parents"] if p in by_step]
    labels = {str(s["stepId"]): {"code": f"step {s['stepId']}"} for s in ordered}
    drawing = layered(names, edges, sizes=_sizes(names, labels))
    marks = {str(s["stepId"]): "final" if s["final"] else ("closed" if s["closed"] else "unclosed") for s in ordered}
    return {"steps": ordered, **_svg(drawing, labels, None, marks=marks,
                                     title=lambda n: f"step {n}: {by_step[int(n)]['node'] or ''}")}


def _lines(label: str) -> list[str]:
    """A label's lines: words joined while a line holds :data:`LINE_CHARS`, a word never cut, an ``=``
    kept at the end of its line (``Item06 = Item08`` reads as one name per line where it wraps).

    >>> _lines("Item06 = Item08"), _lines("frcsub_Item06 = frcsub_Item08 = x")
    (['Item06 = Item08'], ['frcsub_Item06 =', 'frcsub_Item08 = x'])
    """
    words: list[str] = []
    for word in label.split(" "):
        if word == "=" and words:
            words[-1] += " ="
        else:
            words.append(word)
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= LINE_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _box(lines: list[str]) -> tuple[float, float]:
    """The box that holds ``lines`` of a label: at least :data:`BOX`, wider for a long line, taller for each more.

    >>> _box(["Item06"]), _box(["Item06 = Item08"]), _box(["a =", "b"])
    ((100, 32), (121, 32), (100, 46))
    """
    return (max(BOX[0], max(map(len, lines), default=0) * CHAR_W + 16), BOX[1] + LINE_H * (len(lines) - 1))


def _sizes(names: list[str], labels: dict[str, dict]) -> dict[str, tuple[float, float]]:
    """The box of each node, sized to its label (its ``code``, else its name)."""
    return {n: _box(_lines(labels.get(n, {}).get("code") or n)) for n in names}


def _svg(drawing: Drawing, labels: dict[str, dict], kind: str | None, focus: str | None = None,
         marks: dict[str, str] | None = None, title: Callable[[str], str] | None = None, small: bool = False,
         anchors: dict[str, str] | None = None, data: dict[str, dict] | None = None,
         parts: dict[str, list[str]] | None = None) -> dict:
    """A drawing as what the ``graph`` template macro draws: nodes with label lines, box, link, tooltip, mark
    (and a mixed node's ``parts``, a mark each); edge paths from border to border."""
    nodes = []
    for name, (x, y) in drawing.nodes.items():
        label = labels.get(name, {}).get("code") or name
        width, height = drawing.sizes.get(name, BOX)
        nodes.append({"id": name, "x": x, "y": y, "label": label, "lines": _lines(label),
                      "width": width, "height": height, "title": title(name) if title else label,
                      "href": f"{kind}/{slug(name)}.html" if kind else None,
                      "anchor": (anchors or {}).get(name), "mark": (marks or {}).get(name, ""),
                      "parts": (parts or {}).get(name), "focus": name == focus, "data": (data or {}).get(name, {})})
    return {"nodes": nodes, "edges": [{"from": a, "to": b, "d": drawing.path(a, b, points)}
                                      for a, b, points in drawing.edges],
            "width": drawing.width, "height": drawing.height, "small": small}


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
