"""Prerequisite relations learned from a dataset's answers (ITA, IITA), compared with Eq. 1 and written apart.

ITA/IITA relations (:mod:`kstp.kst.iita`) learned from the human learners' complete
answers (:func:`kstp.evaluators.blim.response_data`) or a response file are written as
LEARNED_PREREQUISITE_OF edges, apart from (never mixed with) the Eq. 1 PREREQUISITE_OF
edges every KST query reads; the report lists where the two relations disagree. IITA's
report keeps its whole selection set, as DAKS's ``summary(iita(...))`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kstp.errors import KstpError
from kstp.evaluators.blim import ResponseData, response_data
from kstp.graph.store import GraphStore
from kstp.kst import iita as learned
from kstp.kst.spaces import TooManyStatesError
from kstp.loaders.kstio import read_kst_file

__all__ = ["PrerequisiteReport", "learn_prerequisites"]


@dataclass
class PrerequisiteReport:
    """A learned relation and how it compares with the dataset's Eq. 1 edges."""

    dataset: str
    rule: str
    pairs: pd.DataFrame  # fromId, toId, counterexamples, errorRate, inEq1
    eq1_only: list[tuple[str, str]]
    details: dict
    #: IITA's selection set as DAKS's summary prints it: per candidate quasi-order (``index`` from 1, as DAKS's
    #: ``selection.set.index``), its ``pairs`` ([prerequisite, item]), ``size``, ``diff``, ``errorRate``,
    #: whether it is ``selected``, and the pairs ``added`` to the candidate before it (the chain grows).
    candidates: pd.DataFrame | None = None

    def summary(self) -> dict:
        learned_pairs = set(zip(self.pairs["fromId"], self.pairs["toId"], strict=True))
        both = int(self.pairs["inEq1"].sum())
        return {"dataset": self.dataset, "rule": self.rule, "learned": len(learned_pairs), "eq1": both + len(
            self.eq1_only), "both": both, "learnedOnly": len(learned_pairs) - both, "eq1Only": len(self.eq1_only),
            **self.details}


def _candidates(result, items: list[str]) -> pd.DataFrame:
    """IITA's selection set as a table (see :attr:`PrerequisiteReport.candidates`)."""
    rows, before = [], set()
    for k, relation in enumerate(result.candidates):
        pairs = [[items[p], items[q]] for p, q in zip(*np.nonzero(relation), strict=True)]
        now = {tuple(pair) for pair in pairs}
        rows.append({"index": k + 1, "size": len(pairs), "diff": float(result.diff[k]),
                     "errorRate": float(result.error_rates[k]), "selected": k == result.selected,
                     "added": [list(pair) for pair in sorted(now - before)], "pairs": pairs})
        before = now
    return pd.DataFrame(rows, columns=["index", "size", "diff", "errorRate", "selected", "added", "pairs"])


def learn_prerequisites(store: GraphStore | None, dataset: str | None, rule: str = "iita", variant: int = 1,
                        threshold: int | None = None, search: str = "local", write: bool = True,
                        limit: int = 200_000, responses: str | Path | None = None,
                        z_test: bool = False) -> PrerequisiteReport:
    """Learn a prerequisite relation from the answers (ITA or IITA) and compare it with Eq. 1.

    The learned pairs are written as ``(:Question)-[:LEARNED_PREREQUISITE_OF {rule,
    counterexamples, errorRate, inEq1}]->(:Question)``, replacing the dataset's earlier
    learned relation (of either rule); the Eq. 1 ``PREREQUISITE_OF`` edges are read,
    never changed: every KST query (fringes, PSR, the space) reads those alone.

    ``limit`` bounds the knowledge space of each relation ITA weighs (its discrepancy
    needs the states listed). IITA's report keeps every candidate of its selection set
    with its diff and error rate (``candidates``), as DAKS's ``summary(iita(...))`` gives
    them. With ``responses`` (a response file, :func:`kstp.loaders.kstio.read_kst_file`)
    the answers come from the file, ``store`` and ``dataset`` may be None, and nothing is
    compared or written. With ``z_test`` (IITA variants 1 and 2) the details add the Z test
    of the selected relation's diff (:func:`kstp.kst.iita_ztest.z_test`, DAKS's ``z_test``):
    ``zTest`` with ``z``, ``p``, ``conf`` (95 %) and ``diff`` (diff / N^2).

    Raises
    ------
    KstpError
        On an unknown rule, a Z test of ITA or of IITA's original variant, and as
        :func:`kstp.evaluators.blim.response_data` (or the file's reader).
    TooManyStatesError
        ITA only: when a relation on the way has a space of more than ``limit`` states.
    """
    if rule not in ("iita", "ita"):
        raise KstpError(f"unknown rule {rule!r}; use iita or ita")
    if z_test and (rule != "iita" or variant not in (1, 2)):
        raise KstpError("the Z test is of IITA's diff, variants 1 and 2 (DAKS's z_test): use --rule iita with "
                        "--variant 1 or 2")
    if responses is not None:
        read = read_kst_file(responses, kind="data")
        data, write, dataset = ResponseData(read.items, read.labels or [], read.matrix, 0), False, Path(responses).stem
    else:
        data = response_data(store, dataset)
    candidates = None
    if rule == "iita":
        result = learned.iita(data.matrix, variant)
        relation, error = result.relation, result.error_rate
        details = {"variant": learned.IITA_VARIANTS[variant], "errorRate": error, "diff": float(result.diff[
            result.selected]), "selectionSetIndex": result.selected + 1, "candidateCount": len(result.candidates)}
        candidates = _candidates(result, data.items)
        if z_test:
            from kstp.kst.iita_ztest import z_test as diff_z_test

            t = diff_z_test(data.matrix, result.relation, variant=variant)
            details["zTest"] = {"z": t.z, "p": t.p_value, "conf": list(t.conf), "diff": t.diff[0]}
    else:
        try:
            ita_result = learned.ita(data.matrix, threshold, search, space_limit=limit)
        except TooManyStatesError:
            raise TooManyStatesError(
                f"item tree analysis of {dataset!r}: a relation on the way ({search} threshold search) has a "
                f"knowledge space of more than {limit:,} states, whose discrepancy needs them listed; pass a larger "
                "--limit (time and memory grow with it), a --threshold, or --search local") from None
        relation, error = ita_result.relation & ~np.eye(len(data.items), dtype=bool), float("nan")
        details = {"threshold": ita_result.threshold, "discrepancy": ita_result.discrepancy}
    b = learned.counterexamples(data.matrix)
    eq1 = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True) if responses is None \
        else pd.DataFrame({"fromId": [], "toId": []})
    eq1_pairs = set(zip(eq1["fromId"], eq1["toId"], strict=True))
    p, q = np.nonzero(relation)
    pairs = pd.DataFrame({"fromId": [data.items[i] for i in p], "toId": [data.items[j] for j in q],
                          "counterexamples": b[p, q].astype(np.int64), "errorRate": error})
    pairs["inEq1"] = [(a, c) in eq1_pairs for a, c in zip(pairs["fromId"], pairs["toId"], strict=True)]
    learned_pairs = set(zip(pairs["fromId"], pairs["toId"], strict=True))
    report = PrerequisiteReport(dataset, rule, pairs, sorted(eq1_pairs - learned_pairs), details, candidates)
    if write:
        # One learned edge per pair (writes are keyed by their endpoints): the graph keeps the
        # dataset's latest learned relation, whichever rule learned it.
        stored = pd.concat([store.frame("learned_prerequisites", {"dataset": dataset, "rule": r})
                            for r in ("iita", "ita")])
        edges = pairs.rename(columns={"fromId": "from_id", "toId": "to_id"}).assign(rule=rule)
        store.delete_stale("LEARNED_PREREQUISITE_OF", "Question", "Question",
                           stored.rename(columns={"fromId": "from_id", "toId": "to_id"}), edges)
        store.write_relationships("LEARNED_PREREQUISITE_OF", "Question", "Question", edges)
    return report
