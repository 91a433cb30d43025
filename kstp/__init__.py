"""kstp: Knowledge Space Theory on a property graph.

Curricula, questions, learners and their answers live in one graph (LadybugDB embedded
by default, Neo4j 5 in production); Cypher computes the KST structures and evaluators
write their outcomes back onto the graph.

This namespace is the public Python API: open a graph (:func:`open_store`), ingest
(``load_standards``, ``read_items_csv`` / ``write_items``, ``read_wide`` /
``write_answers``, ...), derive question prerequisites (Eq. 1 of Cui, Do, Sachan 2026),
read knowledge states and fringes, work with knowledge spaces, the BLIM and (I)ITA on
item sets, and run each evaluator (``evaluate_psr``, ``evaluate_koc``, ...) or only its
arithmetic on score tables (``aggregate_psr``, ...). Every result is a typed object or a
pandas DataFrame; kstp's own errors are :class:`KstpError` and its kinds.

Names load on first use, so ``import kstp`` is instant and pulls in neither pandas nor a
graph driver; ``dir(kstp)`` and ``kstp.__all__`` list them all.

Examples
--------
>>> import kstp
>>> space = kstp.KnowledgeSpace.build(["a", "b", "c"], [("a", "b")])  # a is a prerequisite of b
>>> sorted(map(sorted, space.states()))
[[], ['a'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'c'], ['c']]
>>> space.outer_fringe({"a"})
['b', 'c']
"""

from __future__ import annotations

import ast
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from kstp._version import __version__

# The imports below are the public API, and also its table: :func:`_table` reads this block
# once at import, and :func:`__getattr__` imports each name from its module on first use.
if TYPE_CHECKING:
    from kstp.errors import (
        ConfigError,
        CycleError,
        DataNotFoundError,
        GraphUnavailableError,
        InputError,
        KstpError,
        NotAKnowledgeStateError,
        QueryError,
        UnknownIdError,
    )
    from kstp.evaluators.annotation import AnnotationResult, score_annotations
    from kstp.evaluators.annotation import annotate as annotate_concepts
    from kstp.evaluators.answers import AnswersResult
    from kstp.evaluators.answers import aggregate as aggregate_answers
    from kstp.evaluators.answers import evaluate as evaluate_answers
    from kstp.evaluators.blim import BlimReport, next_steps
    from kstp.evaluators.blim import fit_dataset as fit_dataset_blim
    from kstp.evaluators.counterexamples import CheckResult, check_prerequisites
    from kstp.evaluators.dagmath import DagMathResult
    from kstp.evaluators.dagmath import aggregate as aggregate_dagmath
    from kstp.evaluators.dagmath import evaluate as evaluate_dagmath
    from kstp.evaluators.koc import KocResult
    from kstp.evaluators.koc import aggregate as aggregate_koc
    from kstp.evaluators.koc import evaluate as evaluate_koc
    from kstp.evaluators.nextstep import NextstepReport, NextstepResult
    from kstp.evaluators.nextstep import aggregate as aggregate_nextstep
    from kstp.evaluators.nextstep import evaluate as evaluate_nextstep
    from kstp.evaluators.prerequisites import learn_prerequisites
    from kstp.evaluators.psr import PsrResult
    from kstp.evaluators.psr import aggregate as aggregate_psr
    from kstp.evaluators.psr import evaluate_dataset as evaluate_psr
    from kstp.evaluators.psr import score_pairs as score_psr_pairs
    from kstp.evaluators.rqeval import RqevalResult
    from kstp.evaluators.rqeval import aggregate as aggregate_rqeval
    from kstp.evaluators.rqeval import evaluate as evaluate_rqeval
    from kstp.evaluators.rundiff import RunDiff, diff_runs
    from kstp.evaluators.scaffolding import ScaffoldingResult
    from kstp.evaluators.scaffolding import aggregate as aggregate_scaffolding
    from kstp.evaluators.scaffolding import evaluate as evaluate_scaffolding
    from kstp.graph.factory import open_store
    from kstp.graph.gds import concept_depth
    from kstp.graph.store import GraphStore, WriteReport
    from kstp.graph.structures import (
        DerivationReport,
        check_state,
        dataset_questions,
        dataset_space,
        derive_question_prerequisites,
        inner_fringe,
        knowledge_state,
        outer_fringe,
        question_prerequisite_pairs,
    )
    from kstp.inference.backend import Completion, RejectedRequestError, Sampling, backend_names, get_backend
    from kstp.inference.grading import Verdict, grade
    from kstp.inference.runlog import SAMPLE_DTYPES, RunLog, read_run_log, read_samples, run_samples
    from kstp.inference.runs import ConfigChangedError
    from kstp.inference.statistics import mcnemar, pass_at_k, replicate_statistics, sample_statistics
    from kstp.kst.blim import BlimError, BlimFit, fit_blim, most_likely_states, response_patterns
    from kstp.kst.iita import IitaResult, ItaResult, iita, ita
    from kstp.kst.spaces import KnowledgeSpace, TooManyStatesError
    from kstp.loaders.common import LoadReport
    from kstp.loaders.items import (
        ItemSet,
        framework_concepts,
        read_concept_map,
        read_items_csv,
        read_items_jsonl,
        read_math2015,
        write_items,
    )
    from kstp.loaders.responses import read_long, read_pykt, read_wide, write_answers
    from kstp.loaders.standards import load_standards, read_coherence_map, read_concepts_csv, write_curriculum
    from kstp.settings import GraphTarget, graph_target



def _table() -> dict[str, tuple[str, str]]:
    """Public name -> (module, name in it), read from the ``TYPE_CHECKING`` block above."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    return {alias.asname or alias.name: (node.module, alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


_API = _table()
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        import difflib  # only on a miss

        close = difflib.get_close_matches(name, _API, n=3)
        raise AttributeError(f"module 'kstp' has no attribute {name!r}"
                             + (f"; did you mean: {', '.join(close)}?" if close else ""))
    module, attribute = _API[name]
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
