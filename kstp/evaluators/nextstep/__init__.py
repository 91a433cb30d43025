"""Paper 2: next-step recommendations of a model scored against outer fringes.

For each task catalogue (:mod:`kstp.loaders.catalogues`) the admissible knowledge
states are derived from the prerequisite relation; the outer fringe of a state (the
tasks not yet mastered whose prerequisites are all mastered) is the complete set of
admissible next steps. A model is asked, under one of four prompt conditions, for all
and only these steps; its answer is compared with the fringe as an unordered set.

Every name of ``__all__`` is importable from here; the modules, by concern:

- :mod:`kstp.evaluators.nextstep.prompts`: the conditions, the presentations of a
  catalogue, the prompt of a cell and the answer schema.
- :mod:`kstp.evaluators.nextstep.parsing`: an answer is valid, *invalid* (scored as
  incorrect) or *technically missing* (retried, reported apart, never scored).
- :mod:`kstp.evaluators.nextstep.scoring`: set measures of one answer against the
  fringe; an invalid answer is the worst answer in every measure.
- :mod:`kstp.evaluators.nextstep.run`: the crossed design, the run that stores and
  scores every attempt, the sampling presets, re-scoring from the graph.
- :mod:`kstp.evaluators.nextstep.statistics`: state-weighted tables, bootstrap
  intervals, sign-flip tests with Holm adjustment.
- :mod:`kstp.evaluators.nextstep.oracle`: the deterministic recommender, backend
  ``fringe-oracle``; importing this package registers it.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5. Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6.
"""

from kstp.evaluators.nextstep.oracle import FringeOracle
from kstp.evaluators.nextstep.parsing import INVALID_KINDS, Answer, parse_answer
from kstp.evaluators.nextstep.prompts import CONDITIONS, answer_schema, build_prompt, presentation
from kstp.evaluators.nextstep.run import NAME, SAMPLING, VERSION, NextstepResult, design, evaluate, rescore
from kstp.evaluators.nextstep.scoring import HIGHER_IS_BETTER, METRICS, agreement, score_item
from kstp.evaluators.nextstep.statistics import NextstepReport, aggregate

__all__ = ["NAME", "VERSION", "CONDITIONS", "METRICS", "HIGHER_IS_BETTER", "INVALID_KINDS", "SAMPLING", "presentation",
           "build_prompt", "answer_schema", "Answer", "parse_answer", "score_item", "agreement", "design",
           "evaluate", "NextstepResult", "rescore", "aggregate", "NextstepReport", "FringeOracle"]
