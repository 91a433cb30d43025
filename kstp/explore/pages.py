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
the static export. The drawings are made in :mod:`kstp.explore.drawings`, the run, sample and diff
pages in :mod:`kstp.explore.runs`, the learner page in :mod:`kstp.explore.learners`, the question page in
:mod:`kstp.explore.questions` (mixins of :class:`Explorer`), slugs and plain cells in
:mod:`kstp.explore.values`; the names other modules import stay importable from here.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pandas as pd

from kstp.errors import UnknownIdError
from kstp.explore.compare import ComparePages
from kstp.explore.drawings import DRAW_LIMIT, HASSE_LIMIT
from kstp.explore.drawings import class_dag as _class_dag
from kstp.explore.drawings import hasse as _hasse
from kstp.explore.drawings import label_sizes as _sizes
from kstp.explore.drawings import svg as _svg
from kstp.explore.layout import layered
from kstp.explore.learners import LearnerPages
from kstp.explore.pictures import GRID_LIMIT, blim_pictures, expected_observed, psr_pictures, qmatrix_grid
from kstp.explore.questions import QuestionPages
from kstp.explore.readonly import AD_HOC_TIMEOUT_S
from kstp.explore.runs import FILTERS, RUN_FIGURES, RunPages
from kstp.explore.values import PAGE_SIZE, local_names, node_record, slug, unslug
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import paged as _page
from kstp.explore.values import plain as _plain
from kstp.graph.store import GraphStore
from kstp.graph.structures import scoped_question_ids

# The names other modules import from here (slug and the limits live in values, drawings and runs since the split).
__all__ = ["Explorer", "slug", "unslug", "PAGE_SIZE", "DRAW_LIMIT", "HASSE_LIMIT", "PSR_INLINE_ANSWERS", "FILTERS",
           "RUN_FIGURES", "SORTABLE", "PICTURE_CSVS"]

#: States that counting a knowledge space may enumerate (``kstp kst space``'s limit).
COUNT_LIMIT = 10**7
#: Datasets with at most this many answers get their PSR distribution on the dataset page; larger
#: ones on a page of their own (it reads every answer: seconds at XES3G5M scale).
PSR_INLINE_ANSWERS = 500_000
#: Most rows an ad-hoc statement returns (a LIMIT is added where it has none).
AD_HOC_ROWS = 1000
#: How the query form's boolean fields read (typed as text; left empty: false).
FORM_BOOLEANS = {**{t: True for t in ("true", "1", "yes", "on")}, **{f: False for f in ("false", "0", "no", "off", "")}}
#: Q-matrix rows per page.
QMATRIX_PAGE = 200
#: The pictures whose whole table is a CSV of its own (``<kind>/<id>.csv``, :meth:`Explorer.picture_csv`): those
#: that may have more than the 500 rows a page lists (the BLIM rates and the Q-matrix have their tables on the page).
PICTURE_CSVS = ("psr-questions", "run-strip")
#: Learner pages kept (the latest visited): each reads its next steps and fringes anew otherwise (0.1-0.4 s).
RECENT_PAGES = 64
#: Learner-table columns a user may sort by.
SORTABLE = ("learnerId", "kind", "nAnswered", "accuracy", "psrMicro", "psrMacro", "blimPosterior")


class Explorer(RunPages, ComparePages, QuestionPages, LearnerPages):
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
        self._recent: OrderedDict[tuple, Any] = OrderedDict()  # the last pages of a kind there are many of
        self._ahead: dict[str, tuple] = {}  # LearnerPages.read_learners

    def _kept(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    def _recent_page(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """Like :meth:`_kept`, for pages there is one of per learner (18,066 at XES3G5M scale; an export visits
        them all): the last :data:`RECENT_PAGES` are kept, not every one."""
        with self._lock:
            if key in self._recent:
                self._recent.move_to_end(key)
                return self._recent[key]
            page = self._recent[key] = compute()
            while len(self._recent) > RECENT_PAGES:
                self._recent.popitem(last=False)
            return page

    def locked(self):
        """The lock to hold while a page reads the graph."""
        return self._lock

    def refresh(self) -> bool:
        """Read the graph anew if another process changed it since (:meth:`GraphStore.stamp`); whether it did.

        The embedded graph is reopened (a read-only Ladybug handle keeps the state it was opened
        on) and what the pages keep is dropped, unless an ad-hoc statement or a query form is
        running on it: then the next page does both.
        """
        with self._lock:
            stamp = self.store.stamp()
            if stamp == self._stamp or self._running:
                return False
            self.store.reopen()
            self._stamp = self.store.stamp()
            self._cache.clear()
            self._recent.clear()
            self._ahead.clear()
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

    def model_figures(self, dataset: str, learner: str) -> dict | None:
        """A model's row of :meth:`learner_figures` on ``dataset`` (its accuracy there, its PSR as ``kstp evaluate
        psr`` stored it on the run its answers came from; ``runId`` that run), or None when it answered none."""
        figures = self.learner_figures(dataset)
        found = figures[figures["learnerId"] == learner]
        return _rows(found)[0] if len(found) else None

    def run_psr(self, run: dict) -> dict[str, float | None]:
        """A run's PSR micro and macro on its dataset: the model's, where its answers there are all this run's
        (:meth:`model_figures`: none where the run answered more since ``kstp evaluate psr``), else what
        ``kstp evaluate psr`` stored on the run while they were (a later run has answered some questions again
        since); None where undefined or never evaluated."""
        from kstp.inference.runs import model_learner_id

        stored = {k: run.get(k) for k in ("psrMicro", "psrMacro")}
        if not run.get("dataset") or not run.get("model"):
            return stored
        row = self.model_figures(run["dataset"], model_learner_id(run["model"]))
        if row is not None and row["runId"] == run["id"]:
            return {k: row[k] for k in ("psrMicro", "psrMacro")}
        return stored

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
        for run in runs:
            record = figures.get(run["runId"], {})
            run["figures"] = {k: record.get(k) for k in RUN_FIGURES.get(run["evaluator"], ())
                              if record.get(k) is not None}
            if run["evaluator"] == "answers" or record.get("psrMicro") is not None:  # "-" where undefined
                run["figures"].update(self.run_psr(record))
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

    def _concept_rows(self, framework: str) -> dict[str, dict]:
        """The concepts of ``framework`` by id, each node's properties, read once: a concept page read its drawing's
        labels again (an export of CCSS made 480 such reads)."""
        def read() -> dict[str, dict]:
            ids = self.store.frame("framework_concepts", {"framework": framework})["conceptId"].tolist()
            return {row["id"]: row for row in _rows(self.store.nodes("Concept", ids))} if ids else {}

        return self._kept(("concept rows", framework), read)

    def _concept_index(self, framework: str) -> dict:
        """What every concept page of ``framework`` reads, built once (kept): ``rows`` (each concept's node
        properties), ``up`` and ``down`` (each concept's direct prerequisites and dependants) and ``questions``
        (each concept's rows of concept_questions, from one concepts_questions read). A page read its node and
        its questions and walked the framework's every edge: 11 of the 17 s of an export of CCSS on Neo4j."""
        def compute() -> dict:
            rows = self._concept_rows(framework)
            edges = self._framework_edges(framework)
            up: dict[str, list[str]] = {}
            down: dict[str, list[str]] = {}
            for a, b in zip(edges["fromId"], edges["toId"], strict=True):
                down.setdefault(a, []).append(b)
                up.setdefault(b, []).append(a)
            found = self.store.frame("concepts_questions", {"conceptIds": sorted(rows)}) if rows else None
            questions = {} if found is None else {
                key: _rows(group.drop(columns="conceptId")) for key, group in found.groupby("conceptId", sort=False)}
            return {"rows": rows, "up": up, "down": down, "questions": questions}

        return self._kept(("concept index", framework), compute)

    def concept(self, concept: str, depth: int = 2) -> dict:
        """A concept, its prerequisite neighbourhood to ``depth`` edges each way (a layered DAG) and its questions."""
        frameworks = {f["framework"] for f in self.stats()["frameworks"]}
        record = node_record(self.store, "Concept", concept, frameworks, lambda f: self._concept_index(f)["rows"],
                             "<framework>:<id>, e.g. ccss:142")
        framework = record["framework"]
        index = self._concept_index(framework)
        rows, up, down = index["rows"], index["up"], index["down"]
        ancestors, descendants = _reach(concept, up, depth), _reach(concept, down, depth)
        every_ancestor, every_descendant = _reach(concept, up, None), _reach(concept, down, None)
        shown = [concept, *sorted(ancestors), *sorted(descendants)]
        if len(shown) > DRAW_LIMIT:  # cut at the depth that still fits
            while depth > 1 and len(shown) > DRAW_LIMIT:
                depth -= 1
                ancestors, descendants = _reach(concept, up, depth), _reach(concept, down, depth)
                shown = [concept, *sorted(ancestors), *sorted(descendants)]
        keep = set(shown)
        sub = sorted((a, b) for a in keep for b in down.get(a, ()) if b in keep)  # concept_prerequisites' order
        depths = self.depths(framework)
        missing = [n for n in shown if n not in rows]  # a prerequisite from another framework
        found = [rows[n] for n in shown if n in rows] + (_rows(self.store.nodes("Concept", missing)) if missing else [])
        labels = {r["id"]: {"code": r["code"], "description": r["description"]} for r in found}
        drawing = layered(shown, sub, {n: depths[n] for n in shown} if all(n in depths for n in shown) else None,
                          sizes=_sizes(shown, labels))
        questions = index["questions"].get(concept, []) if concept in rows else \
            _rows(self.store.frame("concept_questions", {"conceptId": concept}))
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
                "qgrid": self._kept(("qgrid", dataset), lambda: qmatrix_grid(dataset, self._qmatrix(dataset),
                                                                             self._skills(dataset))),
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
            return [{"id": q, "localId": local, "concepts": concepts_of.get(q, []), "text": text}
                    for q, local, text in zip(questions["questionId"], questions["localId"], questions["text"],
                                              strict=True)]

        return self._kept(("qmatrix", dataset), compute)

    def _skills(self, dataset: str) -> dict[str, dict]:
        """The concepts the dataset's questions assess, by id (``code``, ``description``: ``--skills``' text)."""
        ids = sorted({c for r in self._qmatrix(dataset) for c in r["concepts"]})
        if not ids or len(ids) * len(self._qmatrix(dataset)) > GRID_LIMIT:
            return {}
        return {r["id"]: r for r in _rows(self.store.nodes("Concept", ids))}

    def _questions(self, dataset: str) -> pd.DataFrame:
        return self._kept(("questions", dataset), lambda: self.store.frame("dataset_questions", {"dataset": dataset}))

    def _drawings(self, dataset: str, counted: dict) -> dict:
        """The question prerequisite DAG and the Hasse diagram weighted by learners: every state where the space
        is small enough to draw, else the states some learner is in (where the space can be built)."""
        space = self.space(dataset) if "states" in counted else None
        dag = hasse = None
        if space is not None and len(space.classes) <= DRAW_LIMIT:
            dag = _class_dag(space, local_names(self._questions(dataset)), broken=self._contradicted_pairs(dataset))
        if space is not None:
            answers = self.store.frame("answers", {"dataset": dataset})
            # a learner who answered part of the questions (a model run with --limit) has no answer pattern
            # over the space: not placed in a state (the empty one, say), counted apart
            asked = answers[answers["questionId"].isin(space.items)].groupby("learnerId")["questionId"].nunique()
            whole = set(asked[asked == len(space.items)].index)
            right = answers[answers["correct"].fillna(False).astype(bool) & answers["learnerId"].isin(whole)]
            patterns = {learner: set() for learner in whole}
            for learner, question in zip(right["learnerId"], right["questionId"], strict=True):
                patterns[learner].add(question)
            figures = self.learner_figures(dataset)
            kinds = dict(zip(figures["learnerId"], figures["kind"].fillna("human"), strict=True))
            blim = self.blim(dataset)
            hasse = _hasse(space, dataset, patterns, counted["states"] > HASSE_LIMIT,
                           self._state_probabilities(dataset), kinds,
                           blim["run"].get("learners") if blim is not None else None)
            partial = sorted(set(answers["learnerId"]) - whole)
            hasse["partial"] = [lid for lid in partial if kinds.get(lid, "human") == "human"]
            hasse["partialApart"] = [{"id": lid, "kind": kinds[lid]} for lid in partial
                                     if kinds.get(lid, "human") != "human"]
            if blim is not None and blim["run"].get("learners"):
                hasse["expected"] = expected_observed(hasse, dataset)
        return {"dag": dag, "hasse": hasse}

    def _contradicted_pairs(self, dataset: str) -> dict[tuple[str, str], str]:
        """The prerequisite edges ``kstp validate prerequisites`` found the answers contradict, each with why."""
        return {(r["fromId"], r["toId"]): f"contradicted by the answers: {r['counterexamples']} of the "
                f"{r['attemptedBoth']} learners who answered both got {r['toId']} right and {r['fromId']} wrong"
                for r in self._kept(("contradicted", dataset), lambda: _rows(self.store.frame(
                    "contradicted_prerequisites", {"dataset": dataset})))}

    def _state_probabilities(self, dataset: str) -> dict[frozenset, float] | None:
        """BLIM's fitted probability of each state of the dataset's latest fit, by its questions (None: no fit)."""
        blim = self.blim(dataset)
        return None if blim is None else blim["byState"]

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
            self.question_facts(dataset)  # the question pages' and run pages' reads of the dataset

    def psr(self, dataset: str) -> dict:
        """``kstp evaluate psr --dataset D``'s rows (not written back), each learner's figures and the pictures
        (:func:`~kstp.explore.pictures.psr_pictures`) (kept)."""
        def compute() -> dict:
            from kstp.evaluators.psr import BUCKETS, evaluate_dataset, question_table

            result = evaluate_dataset(self.store, dataset, write_back=False)
            summary = [{k: _plain(v) for k, v in r.items()} for r in result.summary()]
            return {"summary": summary, "buckets": list(BUCKETS), "learners": result.learners.sort_index(),
                    **psr_pictures(dataset, result.learners.sort_index(), question_table(result), summary,
                                   list(BUCKETS))}

        self._dataset_row(dataset)
        return self._kept(("psr", dataset), compute)

    def psr_inline(self, dataset: str) -> bool:
        """Whether the pages compute ``dataset``'s PSR (answers, but at most :data:`PSR_INLINE_ANSWERS`)."""
        return 0 < self._dataset_row(dataset)["answers"] <= PSR_INLINE_ANSWERS

    def learner_psr(self, dataset: str) -> tuple[pd.DataFrame, str, bool]:
        """Each learner's ``accuracy``, ``psrMicro``, ``psrMacro`` (indexed by ``learnerId``), where they come from
        and whether they were computed now on ``dataset``: ``kstp evaluate psr`` up to :data:`PSR_INLINE_ANSWERS`
        answers, else the figures its last run stored (reading every answer takes seconds at XES3G5M scale):
        each learner's on ``dataset`` (:meth:`learner_figures`: a model's on the run its answers came from)."""
        if self._dataset_row(dataset)["answers"] <= PSR_INLINE_ANSWERS:
            return self.psr(dataset)["learners"], "kstp evaluate psr, computed now", True
        return (self.learner_figures(dataset).set_index("learnerId"), "as the last kstp evaluate psr stored them "
                "(a model's on the run its answers came from)", False)

    def psr_csv(self, dataset: str) -> str:
        """Each learner's PSR figures as CSV: the rows of ``kstp evaluate psr --out``'s ``psr_learners_<D>.csv``."""
        from kstp.csvcells import write_csv

        return self._kept(("psr csv", dataset), lambda: write_csv(self.psr(dataset)["learners"]))  # 0.4 s at 18 k

    def picture_csv(self, kind: str, ident: str) -> str:
        """The whole table of a picture whose page shows at most 500 of its rows, as CSV (``<kind>/<id>.csv``).

        ``kind`` is one of :data:`PICTURE_CSVS`: ``psr-questions`` (dataset ``ident``'s PSR per target question,
        ``kstp evaluate psr --per-question``'s rows) or ``run-strip`` (run ``ident``'s share of right samples per
        question). Kept, like the pages it comes from.

        Raises
        ------
        UnknownIdError
            When ``kind`` is not one of them, ``ident`` is unknown, or it has no such picture.
        """
        if kind not in PICTURE_CSVS:
            raise UnknownIdError(f"no picture table {kind!r}; tables as CSV: {', '.join(PICTURE_CSVS)}")

        def compute() -> str:
            from kstp.csvcells import write_csv

            chart = self.psr(ident)["questions"] if kind == "psr-questions" else self.run(ident)["pictures"]["strip"]
            if chart is None:
                raise UnknownIdError(f"{ident!r} has no {kind} picture")
            return write_csv(pd.DataFrame(chart["table"]["rows"], columns=chart["table"]["columns"]), index=False)

        return self._kept(("picture csv", kind, ident), compute)

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
        local = local_names(self._questions(dataset))
        top = [{"stateId": s, "probability": _plain(p), "state": members.get(s, []),
                "local": [local.get(q, q) for q in members.get(s, [])]}
               for s, p in probability.sort_values(ascending=False, kind="stable").head(20).items()]
        fit = {"run": run[0] if run else {"id": run_id}, "questions": _rows(items), "states": top,
               "stateCount": len(probability),
               "byState": {frozenset(members.get(s, [])): float(p) for s, p in probability.items()},
               "named": {s: "{" + ", ".join(local.get(q, q) for q in members.get(s, [])) + "}"
                         for s in probability.index}}
        return {**fit, "pictures": blim_pictures(fit)}

    # ---- queries -------------------------------------------------------------------------
    def queries(self) -> list[dict]:
        """The registered queries with their parameters (``kstp query --list``) that this engine can run."""
        from kstp.graph.queries import registry

        return [{"name": q.name, "area": q.area, "params": q.params, "returns": list(q.returns),
                 "description": q.description}
                for q in sorted(registry().values(), key=lambda q: (q.area, q.name))
                if self.store.engine in q.engines and not q.name.startswith(("gds_", "vector_"))]

    def query(self, name: str, given: dict[str, str]) -> dict:
        """Run a registered query with parameters typed as text (``kstp query``'s parsing); its rows.

        As an ad-hoc statement: outside the lock and under the time limit (a form query such as
        ``question_prerequisites`` on a large dataset reads for a minute)."""
        from kstp.graph.queries import get_query

        spec = get_query(name)
        if not given:
            return {"query": spec, "given": {}, "rows": None, "columns": list(spec.returns)}
        values = {key: spec.parse_param(key, given.get(key, ""), FORM_BOOLEANS) for key in spec.params}
        if "dataset" in values and "questionIds" in values:  # local ids as kstp query takes them, checked
            values["questionIds"] = self._question_ids(name, values["dataset"], values["questionIds"])
        spec.check_params(values)
        frame = self._statement(spec.text(self.store.engine), values)
        if frame.empty and not len(frame.columns):
            frame = pd.DataFrame(columns=list(spec.returns))
        return {"query": spec, "given": given, "rows": _rows(frame), "columns": list(frame.columns)}

    def _question_ids(self, query: str, dataset: str, given: list[str]) -> list[str]:
        """``given`` as the dataset's question ids (:func:`~kstp.graph.structures.scoped_question_ids`), or a
        one-line :class:`QueryError`
        naming the ids (or the dataset) the graph does not hold."""
        from kstp.errors import QueryError

        known = {row["datasetId"] for row in self.stats()["datasets"]}
        if dataset not in known:
            raise QueryError(f"{query}: unknown dataset {dataset!r}; datasets in the graph: "
                             f"{', '.join(sorted(known)) or 'none'}")
        questions = self._questions(dataset)
        return scoped_question_ids(dataset, given, set(questions["questionId"]), query)

    def cypher(self, text: str) -> dict:
        """Run a read-only ad-hoc statement (:func:`~kstp.explore.readonly.check_read_only` first), under the
        time limit and outside the lock (see the class notes); call it without holding :meth:`locked`."""
        from kstp.explore.readonly import check_read_only, limited

        statement = limited(check_read_only(text), AD_HOC_ROWS + 1)
        frame = self._statement(statement)
        return {"rows": _rows(frame.head(AD_HOC_ROWS)), "columns": list(frame.columns),
                "more": len(frame) > AD_HOC_ROWS}

    def _statement(self, text: str, params: dict | None = None) -> pd.DataFrame:
        """A statement a user asked for (a query form, ad-hoc Cypher): beside the pages, under the time limit."""
        from kstp.errors import QueryError

        with self._lock:
            self._running += 1
        try:
            return self.store.read_statement(text, params, timeout_s=self.query_timeout_s)
        except (ArithmeticError, TypeError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            first = " ".join(str(exc).split())[:200]
            raise QueryError(f"the statement ran, but its result cannot be read ({type(exc).__name__}: {first}); "
                             "a value past the 64-bit integers (INT128) or of no column type reads as a STRING: "
                             "RETURN CAST(... AS STRING)") from None
        finally:
            with self._lock:
                self._running -= 1


def _reach(start: str, neighbours: dict[str, list[str]], depth: int | None) -> set[str]:
    """Nodes within ``depth`` steps of ``start`` (every reachable one for None), ``start`` left out."""
    seen, frontier, steps = {start}, [start], 0
    while frontier and (depth is None or steps < depth):
        frontier = [n for f in frontier for n in neighbours.get(f, []) if n not in seen]
        seen.update(frontier)
        steps += 1
    return seen - {start}
