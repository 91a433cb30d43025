"""Paper 2: next-step recommendations of a model scored against outer fringes.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5.
"""

from kstp.evaluators.nextstep.oracle import FringeOracle
from kstp.evaluators.nextstep.parsing import INVALID_KINDS, Answer, parse_answer
from kstp.evaluators.nextstep.prompts import CONDITIONS, answer_schema, build_prompt, presentation
from kstp.evaluators.nextstep.run import (
    NAME,
    SAMPLING,
    VERSION,
    NextstepResult,
    design,
    evaluate,
    rescore,
)
from kstp.evaluators.nextstep.scoring import HIGHER_IS_BETTER, METRICS, agreement, score_item
from kstp.evaluators.nextstep.statistics import NextstepReport, aggregate

__all__ = ["NAME", "VERSION", "CONDITIONS", "METRICS", "HIGHER_IS_BETTER", "INVALID_KINDS", "SAMPLING", "presentation",
           "build_prompt", "answer_schema", "Answer", "parse_answer", "score_item", "agreement", "design",
           "evaluate", "NextstepResult", "rescore", "aggregate", "NextstepReport", "FringeOracle"]
