"""The explorer's question page: one question as a researcher asks about it.

A mixin of :class:`~kstp.explore.pages.Explorer` (which gives it ``store``, ``_kept``, ``_questions``,
``_qmatrix``, ``psr``, ``run_list`` and each run's samples). A question's page shows its text, gold
answer and options (:func:`~kstp.inference.grading.choices.split_options`, the option lines a grader
reads), the concepts it assesses, its prerequisites and dependants in the stored relation (Eq. 1;
the direct ones, those no third question lies strictly between, first), how many human learners
answered it and how many right (``question_answer_counts``), its PSR as a target (``kstp evaluate
psr --per-question``'s row, where the dataset's PSR is computed on the pages), and every sample a
model gave it across the dataset's runs, with its reply, extracted answer and verdict, beside the
human share right. What is kept per dataset (the relation, the counts, the samples by question) is
built once, so each page is a few lookups.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kstp.explore.values import as_rows as _rows
from kstp.explore.values import human_share, local_names, node_record
from kstp.explore.values import plain as _plain

if TYPE_CHECKING:
    from kstp.graph.store import GraphStore

__all__ = ["QuestionPages", "Neighbours"]

#: Most characters of a reply a question page shows per sample (the sample's page has it whole).
REPLY_CHARS = 600


class Neighbours:
    """A prerequisite relation read for its question pages: each question's prerequisites and dependants split
    three ways (:meth:`split`), in a few big-integer operations per neighbour.

    The relation is kept as bit sets (a Python int per question, bit ``i`` for the ``i``-th id in sorted
    order): the strict prerequisites below each question and the strict dependants above it. A neighbour is
    indirect when it lies strictly below (above) another strict neighbour, so the indirect ones are the
    strict neighbours that the union of the strict neighbours' own sets holds. On XES3G5M's Eq. 1 relation
    (4,118 questions, 1.2 M pairs) both splits of a page take 0.2 ms against 53 ms for pairwise set tests, after a
    0.9 s build.

    Parameters
    ----------
    pre : dict of str to set of str
        Each question's prerequisites (a question may list itself; pairs both ways are equally
        informative questions).

    Examples
    --------
    a before b before c, a before c too; d and c are mutual prerequisites.

    >>> neighbours = Neighbours({"b": {"a"}, "c": {"a", "b", "d"}, "d": {"c"}})
    >>> neighbours.split("c"), neighbours.split("a", below=False)
    ((['b'], ['a'], ['d']), (['b'], ['c'], []))
    """

    def __init__(self, pre: dict[str, set[str]]):
        import numpy as np

        self.ids = sorted(set(pre).union(*pre.values()))
        self.index = {q: i for i, q in enumerate(self.ids)}
        n, index = len(self.ids), self.index
        width = (n + 7) // 8

        def bits(members: np.ndarray) -> int:
            row = np.zeros(width, np.uint8)
            np.bitwise_or.at(row, members >> 3, np.left_shift(1, members & 7).astype(np.uint8))
            return int.from_bytes(row.tobytes(), "little")

        below = [[] for _ in range(n)]
        above = [[] for _ in range(n)]
        for question, prerequisites in pre.items():
            j = index[question]
            for p in prerequisites:
                below[j].append(index[p])
                above[index[p]].append(j)
        down = [bits(np.array(b, np.int64)) if b else 0 for b in below]
        up = [bits(np.array(a, np.int64)) if a else 0 for a in above]
        self._same = [down[i] & up[i] & ~(1 << i) for i in range(n)]
        self._down = [down[i] & ~up[i] & ~(1 << i) for i in range(n)]  # strictly below i
        self._up = [up[i] & ~down[i] & ~(1 << i) for i in range(n)]
        self._width = width

    def _members(self, mask: int) -> list[int]:
        import numpy as np

        if not mask:
            return []
        bits = np.unpackbits(np.frombuffer(mask.to_bytes(self._width, "little"), np.uint8), bitorder="little")
        return np.flatnonzero(bits).tolist()

    def _names(self, mask: int) -> list[str]:
        return [self.ids[i] for i in self._members(mask)]  # ids are sorted, so the names are

    def split(self, question: str, below: bool = True) -> tuple[list[str], list[str], list[str]]:
        """``question``'s prerequisites (``below``) or dependants: the direct ones (no third question strictly
        between), the others, and the equally informative ones (prerequisite both ways), each sorted; three
        empty lists for a question the relation does not name."""
        i = self.index.get(question)
        if i is None:
            return [], [], []
        sets = self._down if below else self._up
        strict = sets[i]
        reach = 0
        for r in self._members(strict):
            reach |= sets[r]
        return self._names(strict & ~reach), self._names(strict & reach), self._names(self._same[i])


class QuestionPages:
    """The question page of :class:`~kstp.explore.pages.Explorer`."""

    store: GraphStore  # given by Explorer, as are the dataset reads and what its pages keep:
    _kept: Callable[[tuple, Callable[[], Any]], Any]

    def question_index(self, dataset: str) -> dict:
        """What every question page of ``dataset`` reads, built once (kept): ``pre`` (each question's stored
        prerequisites), ``counts`` (per question ``{kind: (answered, correct)}``), ``samples`` (per question the
        samples of the dataset's runs, each with its run), ``local`` (local ids) and ``concepts`` (each question's)."""
        def compute() -> dict:
            # a bulk read: on Neo4j 1.2 M rows (XES3G5M) take 3 s as one record of lists, 25 s as records
            edges = self.store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)
            pre: dict[str, set[str]] = {}
            for a, b in zip(edges["fromId"], edges["toId"], strict=True):
                pre.setdefault(b, set()).add(a)
            counts: dict[str, dict[str, tuple[int, int]]] = {}
            for row in _rows(self.store.frame("question_answer_counts", {"dataset": dataset})):
                counts.setdefault(row["questionId"], {})[row["kind"] or "?"] = (int(row["answered"]),
                                                                                int(row["correct"]))
            samples: dict[str, list[dict]] = {}
            for run in self.run_list():
                if run.get("dataset") != dataset:
                    continue
                for row in self.samples_of(run["id"], run.get("evaluator") or ""):
                    if row.get("questionId"):
                        samples.setdefault(row["questionId"], []).append({**row, "runId": run["id"],
                                                                          "model": run.get("model"),
                                                                          "evaluator": run.get("evaluator")})
            questions = self._questions(dataset)
            local = local_names(questions)
            concepts = {r["id"]: r["concepts"] for r in self._qmatrix(dataset)}
            # every question node and concept once: two reads a page were most of a static export's time
            records = {r["id"]: {k: v for k, v in r.items() if k != "embedding"}
                       for r in _rows(self.store.nodes("Question", list(questions["questionId"])))}
            assessed = sorted({c for cs in concepts.values() for c in cs})
            named = {r["id"]: r for r in _rows(self.store.nodes("Concept", assessed))} if assessed else {}
            return {"pre": pre, "neighbours": Neighbours(pre), "counts": counts, "samples": samples, "local": local,
                    "concepts": concepts, "records": records, "named": named}

        return self._kept(("question index", dataset), compute)

    def question(self, question_id: str) -> dict:
        """A question's page: text, gold, options, concepts, prerequisites and dependants, the human share right,
        its PSR as a target and every model sample of it across runs.

        Raises
        ------
        UnknownIdError
            When no question has the id.
        """
        from kstp.inference.grading.choices import CHOICES, option_texts, split_options

        datasets = {row["datasetId"] for row in self.stats()["datasets"]}
        record = node_record(self.store, "Question", question_id, datasets, lambda d: self.question_index(d)["records"],
                             "<dataset>:<id>, e.g. frcsub:Item06")
        dataset = record.get("dataset") or question_id.split(":", 1)[0]
        self._dataset_row(dataset)
        index = self.question_index(dataset)
        texts = option_texts(record.get("text") or "")  # the option lines a grader reads, lettered
        stem = split_options(record["text"])[0] if texts else record.get("text")
        options = [{"letter": CHOICES[k], "text": t} for k, t in enumerate(texts or [])]
        concepts = index["concepts"].get(question_id, [])
        named = index["named"]
        neighbours = index["neighbours"]
        answered, right, share = human_share(index["counts"].get(question_id, {}))
        models = self._model_samples(index["samples"].get(question_id, []))
        return {"question": record, "dataset": dataset, "stem": stem, "options": options,
                "gold": record.get("answer"),
                "concepts": [{"id": c, "code": named.get(c, {}).get("code") or c,
                              "description": named.get(c, {}).get("description")} for c in concepts],
                "prerequisites": dict(zip(("direct", "indirect", "same"), neighbours.split(question_id), strict=True)),
                "dependants": dict(zip(("direct", "indirect", "same"), neighbours.split(question_id, False),
                                       strict=True)),
                "local": index["local"], "humans": {"answered": answered, "right": right, "share": share},
                "kinds": {k: {"answered": a, "right": c} for k, (a, c) in index["counts"].get(question_id,
                                                                                              {}).items()},
                "psr": self._question_psr(dataset, question_id), "samples": models}

    def _question_psr(self, dataset: str, question_id: str) -> dict | None:
        """The question's row of ``kstp evaluate psr --per-question`` where the pages compute the dataset's PSR
        (``{"inline": False}`` where they do not; None with the row absent: no human answered it right with a
        prerequisite counted)."""
        if not self.psr_inline(dataset):
            return {"inline": False}
        table = self.psr(dataset)["questions"]
        if table is None:
            return None
        columns = table["table"]["columns"]
        for row in table["table"]["rows"]:
            if row[0] == question_id:
                return {"inline": True, **dict(zip(columns, (_plain(v) for v in row), strict=True))}
        return None

    def _model_samples(self, samples: list[dict]) -> list[dict]:
        """The samples with their replies (``responses_by_id``), by run then sample."""
        from kstp.explore.runs import sample_kind

        if not samples:
            return []
        texts = self.store.frame("responses_by_id", {"ids": [s["responseId"] for s in samples]})
        text = dict(zip(texts["responseId"], texts["text"], strict=True)) if len(texts) else {}
        out = []
        for s in sorted(samples, key=lambda s: (s["runId"], s.get("sampleIndex") or 0, s["responseId"])):
            reply = text.get(s["responseId"])
            out.append({**s, "kind": sample_kind(s), "reply": None if reply is None else str(reply),
                        "cut": reply is not None and len(str(reply)) > REPLY_CHARS})
        return out
