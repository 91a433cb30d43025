"""The model an assessment runs on: a structure (listed states, or the surmise relation), the rates and the prior.

Three sources (:data:`STRUCTURES`):

- ``fit``: the dataset's latest BLIM fit on the graph (``kstp fit blim``): its states,
  their fitted probabilities as the prior (or a uniform prior), each question's fitted
  careless and guessing rates;
- ``surmise``: the dataset's derived question prerequisites as a surmise relation
  (:mod:`kstp.kst.assess_large`), for domains whose space cannot be listed; the rates are
  the BLIM fit's where the graph has one, else the ones given;
- a structure file (any of :func:`kstp.evaluators.structures.load_structure`'s formats):
  its states, its probability column as the prior where it has one, the rates given.

PSR is predicted over the dataset's stored prerequisite pairs (none for a file).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.kst.assess import MIN_INFORMATION, Procedure, check_rule
from kstp.kst.assess_large import SurmiseProcedure
from kstp.kst.spaces import KnowledgeSpace

__all__ = ["VERSION", "STRUCTURES", "PRIORS", "AssessmentModel", "load_model", "DEFAULT_RATE", "Settings"]

VERSION = "1.0"
#: Where the structure comes from (besides a file).
STRUCTURES = ("fit", "surmise")
#: The prior on the states: the fit's state probabilities, or every state alike.
PRIORS = ("fit", "uniform")
#: Careless and guessing rate where neither a fit nor the caller gives one.
DEFAULT_RATE = 0.1


@dataclass(frozen=True)
class Settings:
    """How an assessment asks and stops: the questioning rule, the threshold (on the surmise relation the band
    (1 - threshold, threshold) of the items' masses), the budget, the batch and the seed."""

    rule: str = "half-split"
    threshold: float = 0.8
    budget: int | None = None
    batch: int = 1
    seed: int = 0

    def record(self) -> dict:
        return {"rule": self.rule, "threshold": self.threshold, "budget": self.budget, "batch": self.batch,
                "seed": self.seed}


@dataclass
class AssessmentModel:
    """What an assessment needs: items, rates, and the listed states with a prior or the surmise relation.

    Attributes
    ----------
    items : list of str
        Question ids (a dataset's) or a file's item names; indices below refer to them.
    beta, eta : ndarray (items,)
    states : ndarray (states, items) uint8, or None on the surmise relation
    prior : ndarray (states,), or None
    space : KnowledgeSpace, or None for listed states
    pairs : ndarray (pairs, 2)
        Prerequisite pairs (p, q) by item index, for the predicted PSR.
    texts, golds : dict of item to str
        The questions' texts and gold answers where the graph has them.
    source : str
        Where the structure and rates came from, for people.
    identity : dict
        What makes two assessments comparable (part of a run's configuration).
    """

    dataset: str | None
    items: list[str]
    beta: np.ndarray
    eta: np.ndarray
    states: np.ndarray | None = None
    prior: np.ndarray | None = None
    space: KnowledgeSpace | None = None
    pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    texts: dict = field(default_factory=dict)
    golds: dict = field(default_factory=dict)
    source: str = ""
    identity: dict = field(default_factory=dict)

    @property
    def method(self) -> str:
        """``listed`` (:class:`~kstp.kst.assess.Procedure`) or ``surmise`` (:mod:`kstp.kst.assess_large`)."""
        return "listed" if self.states is not None else "surmise"

    def procedure(self, settings: Settings):
        """A fresh assessment under ``settings``.

        Raises
        ------
        AssessmentError
            As :class:`~kstp.kst.assess.Procedure` and
            :class:`~kstp.kst.assess_large.SurmiseProcedure`.
        """
        check_rule(settings.rule)
        if self.states is not None:
            return Procedure(self.states, self.beta, self.eta, self.prior, settings.rule, settings.threshold,
                             settings.budget, MIN_INFORMATION, settings.seed)
        low = min(settings.threshold, 1 - settings.threshold)
        return SurmiseProcedure(self.space, self.beta, self.eta, self.items, settings.rule, (low, 1 - low),
                                settings.budget, MIN_INFORMATION, seed=settings.seed)

    def config_hash(self, settings: Settings, **extra) -> str:
        """A hash of the model's identity, the settings and ``extra``: the id of a comparable assessment."""
        record = {"model": self.identity, "settings": settings.record(), **extra}
        return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()

    def names(self, mask) -> list[str]:
        """The items of a boolean mask, in item order."""
        return [q for q, inside in zip(self.items, np.asarray(mask, bool), strict=True) if inside]


def _pairs(edges: pd.DataFrame, items: list[str]) -> np.ndarray:
    """The rows of ``question_prerequisite_edges`` between ``items`` as (prerequisite, question) index pairs."""
    index = {q: j for j, q in enumerate(items)}
    rows = [(index[p], index[q]) for p, q in zip(edges["fromId"], edges["toId"], strict=True)
            if p in index and q in index]
    return np.array(rows, np.int64).reshape(-1, 2)


def _rate(value: float | None, what: str) -> float | None:
    if value is not None and not 0 <= value < 1:
        raise KstpError(f"a {what} rate lies in [0, 1); got {value}")
    return value


def load_model(store: GraphStore | None, dataset: str | None, structure: str | Path = "fit", prior: str = "fit",
               careless: float | None = None, guess: float | None = None, limit: int = 100_000) -> AssessmentModel:
    """The model of ``dataset`` (or of a structure file) for an assessment.

    Parameters
    ----------
    structure : {"fit", "surmise"} or path
        See the module notes.
    prior : {"fit", "uniform"}
        The fit's (or the file's) state probabilities, or every state alike. On the
        surmise relation the prior is the skills' (see :mod:`kstp.kst.assess_large`).
    careless, guess : float, optional
        Replace every question's careless (guessing) rate; needed where no fit gives
        them (default then :data:`DEFAULT_RATE`).
    limit : int
        Refuse a structure file with more states than this.

    Raises
    ------
    KstpError
        On an unknown structure or prior, a rate outside [0, 1), no BLIM fit on the graph
        for ``structure="fit"`` (the message says how to make one), a dataset without
        derived prerequisites for ``surmise``, or neither a dataset nor a file.
    UnknownIdError
        When the dataset is not in the graph.
    """
    careless, guess = _rate(careless, "careless-error"), _rate(guess, "guessing")
    if prior not in PRIORS:
        raise KstpError(f"unknown prior {prior!r}; use one of {', '.join(PRIORS)}")
    if isinstance(structure, Path) or structure not in STRUCTURES:
        return _from_file(Path(structure), prior, careless, guess, limit)
    if dataset is None:
        raise KstpError("assess on a dataset (--dataset) or on a structure file (--structure FILE)")
    from kstp.evaluators.structures import stored_fit
    from kstp.graph.structures import dataset_questions, dataset_space

    questions = dataset_questions(store, dataset)
    texts = {q: t for q, t in zip(questions["questionId"], questions["text"], strict=True) if isinstance(t, str)}
    golds = {q: a for q, a in zip(questions["questionId"], questions["answer"], strict=True) if isinstance(a, str)}
    has_fit = not store.frame("blim_item_parameters", {"dataset": dataset}).empty
    if structure == "fit":
        if not has_fit:
            raise KstpError(f"dataset {dataset!r} has no BLIM fit on the graph to assess with; fit one first "
                            f"(kstp fit blim --dataset {dataset}) or assess on its prerequisites (--structure surmise)")
        fit = stored_fit(store, dataset)
        items = fit["items"]
        beta = np.full(len(items), careless) if careless is not None else fit["beta"]
        eta = np.full(len(items), guess) if guess is not None else fit["eta"]
        states = fit["states"]
        p = fit["probability"] if prior == "fit" else np.full(len(states), 1 / len(states))
        source = f"BLIM fit {fit['runId']}: {len(states)} states, {'fitted' if prior == 'fit' else 'uniform'} prior"
        identity = {"dataset": dataset, "structure": "fit", "fit": fit["runId"], "prior": prior,
                    "careless": careless, "guess": guess}
        edges = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)  # a bulk read
        return AssessmentModel(dataset, items, beta, eta, states, p, None, _pairs(edges, items), texts, golds,
                               source, identity)
    edges = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)  # a bulk read
    if edges.empty:
        raise KstpError(f"dataset {dataset!r} has no derived question prerequisites to assess on; derive them first "
                        f"(kstp derive question-prerequisites --dataset {dataset})")
    space = dataset_space(store, dataset)
    items = list(space.items)
    if has_fit and (careless is None or guess is None):
        fit = store.frame("blim_item_parameters", {"dataset": dataset}).set_index("questionId").reindex(items)
        beta = fit["careless"].to_numpy(np.float64) if careless is None else np.full(len(items), careless)
        eta = fit["guess"].to_numpy(np.float64) if guess is None else np.full(len(items), guess)
        rates = f"the rates of BLIM fit {fit['runId'].dropna().iloc[0]}"
    else:
        beta = np.full(len(items), DEFAULT_RATE if careless is None else careless)
        eta = np.full(len(items), DEFAULT_RATE if guess is None else guess)
        rates = f"careless {beta[0]:g}, guessing {eta[0]:g} for every question"
    source = (f"the surmise relation of {dataset}'s derived prerequisites ({len(items):,} questions in "
              f"{len(space.classes):,} classes), {rates}")
    identity = {"dataset": dataset, "structure": "surmise", "relation": len(edges), "careless": careless,
                "guess": guess, "rates": rates}
    return AssessmentModel(dataset, items, beta, eta, None, None, space, _pairs(edges, items), texts, golds,
                           source, identity)


def _from_file(path: Path, prior: str, careless: float | None, guess: float | None, limit: int) -> AssessmentModel:
    from kstp.evaluators.structures import load_structure
    from kstp.loaders.kstio import read_kst_file

    if not path.is_file():
        raise KstpError(f"{str(path)!r} is neither fit nor surmise, and file {str(path)!r} does not exist")
    structure, source = load_structure(None, None, path, limit)
    items, states = list(structure.items), np.asarray(structure.states, np.uint8)
    read = read_kst_file(path)
    if prior == "fit" and read.extra and "probability" in read.extra and read.kind not in ("basis", "relation"):
        p, how = np.asarray(read.extra["probability"], np.float64), "its probability column as the prior"
    else:
        p, how = np.full(len(states), 1 / len(states)), "a uniform prior"
    beta = np.full(len(items), DEFAULT_RATE if careless is None else careless)
    eta = np.full(len(items), DEFAULT_RATE if guess is None else guess)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return AssessmentModel(None, items, beta, eta, states, p, None, source=f"{source}; {how}; careless {beta[0]:g}, "
                           f"guessing {eta[0]:g}", identity={"file": path.name, "sha256": digest, "prior": prior,
                                                             "careless": careless, "guess": guess})
