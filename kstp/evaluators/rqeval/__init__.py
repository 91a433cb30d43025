"""Paper 3, RQEval: six behavioural dimensions of reasoning quality, deployment scenarios,
discriminant validity; the package re-exports the public names of its modules.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework" (arXiv 2605.24661).
"""

from kstp.evaluators.rqeval.dimensions import (
    DIMENSIONS,
    HIGHER_IS_BETTER,
    NAME,
    VERSION,
    canonical_answer,
    consistency,
    correctness,
    efficiency,
    logical_coherence,
    robustness,
    score_item,
    split_steps,
    stability,
)
from kstp.evaluators.rqeval.prompts import ANSWER_HINTS as ANSWER_HINTS
from kstp.evaluators.rqeval.prompts import PROMPTS, build_prompt, template_hash
from kstp.evaluators.rqeval.prompts import SYSTEM_PROMPT as SYSTEM_PROMPT
from kstp.evaluators.rqeval.prompts import USER_TEMPLATE as USER_TEMPLATE
from kstp.evaluators.rqeval.results import CHUNK as CHUNK
from kstp.evaluators.rqeval.results import (
    OVERALL,
    RqevalResult,
    dataset_scores,
    evaluate,
    item_frame,
    overall_scores,
    run_items,
    run_scores,
    stored_runs,
    stored_scores,
    temperature_warning,
)
from kstp.evaluators.rqeval.scenarios import LONG_NAMES as LONG_NAMES
from kstp.evaluators.rqeval.scenarios import (
    SCENARIOS,
    aggregate,
    check_weights,
    load_scenarios,
    rankings,
    scenario_scores,
)
from kstp.evaluators.rqeval.validity import (
    correlation_category,
    discriminant_validity,
    partial_correlation,
    significance,
)

__all__ = ["NAME", "VERSION", "DIMENSIONS", "HIGHER_IS_BETTER", "SCENARIOS", "PROMPTS", "OVERALL", "build_prompt",
           "score_item", "overall_scores", "significance", "correlation_category",
           "canonical_answer",
           "split_steps", "correctness", "consistency", "robustness", "logical_coherence", "efficiency",
           "stability", "aggregate", "scenario_scores", "load_scenarios", "check_weights", "rankings",
           "discriminant_validity", "partial_correlation", "temperature_warning", "RqevalResult", "evaluate",
           "item_frame", "run_scores", "run_items", "stored_runs", "stored_scores", "dataset_scores",
           "template_hash"]
