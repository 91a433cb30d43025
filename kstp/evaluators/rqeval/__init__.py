"""Paper 3, RQEval: six behavioural dimensions of reasoning quality, deployment scenarios,
discriminant validity.

A model answers each item of a dataset K times and each of its perturbations once; from
the graded completions six dimensions score its reasoning, all higher-is-better in
[0, 1]: correctness CQ, consistency CS, robustness RS, logical coherence LS, efficiency
ES and stability SS. A deployment scenario weighs them into one score. The package, by
concern, each module importing only those listed before it:

- :mod:`~kstp.evaluators.rqeval.prompts`: the prompt styles and their template hash (§3.4).
- :mod:`~kstp.evaluators.rqeval.dimensions`: the grading of one completion and the six
  dimensions, pure (§3.2); the evaluator's name and version.
- :mod:`~kstp.evaluators.rqeval.scenarios`: the deployment scenarios, the score under
  each and the rankings they give (§3.3, Table 8).
- :mod:`~kstp.evaluators.rqeval.validity`: discriminant validity (§4.5, Table 9, Figures 4-5).
- :mod:`~kstp.evaluators.rqeval.results`: a run's items and stored responses as
  per-item frames, and the dimensions of runs and models (§4, Table 7).
- :mod:`~kstp.evaluators.rqeval.judges`: the release's NLI judge (LS) and BERTScore model
  (SS), the fallback where the latter is not cached, and the notes on other judges.
- :mod:`~kstp.evaluators.rqeval.run`: a (model, dataset) run, from the prompts to the
  scores written back onto the graph.

This namespace re-exports their public names.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework" (arXiv 2605.24661). Scenario weights: the authors' code,
github.com/senolali/RQEval, ``config/config.yaml`` (``aggregation.strategies``).
"""

from kstp.evaluators.rqeval.dimensions import (
    DIMENSIONS,
    GRADING,
    HIGHER_IS_BETTER,
    NAME,
    ROBUSTNESS,
    SLOTS,
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
    stability_trace,
)
from kstp.evaluators.rqeval.judges import (
    NLI_MODEL,
    PAPER_NLI,
    PAPER_SIMILARITY,
    SIMILARITY_LAYER,
    SIMILARITY_MODEL,
    notes,
    similarity_scorer,
)
from kstp.evaluators.rqeval.prompts import PROMPTS, build_prompt, template_hash
from kstp.evaluators.rqeval.results import (
    OVERALL,
    dataset_scores,
    item_frame,
    overall_scores,
    run_items,
    run_scores,
    stored_runs,
    stored_scores,
)
from kstp.evaluators.rqeval.run import SAMPLING, RqevalResult, evaluate, temperature_warning
from kstp.evaluators.rqeval.scenarios import (
    LONG_NAMES,
    SCENARIOS,
    aggregate,
    check_weights,
    load_scenarios,
    rankings,
    scenario_scores,
)
from kstp.evaluators.rqeval.validity import (
    OUTCOME,
    STRUCTURAL,
    TRACE,
    correlation_category,
    discriminant_validity,
    layer_summary,
    partial_correlation,
    significance,
)

__all__ = ["NAME", "VERSION", "DIMENSIONS", "HIGHER_IS_BETTER", "SCENARIOS", "LONG_NAMES", "PROMPTS", "OVERALL",
           "ROBUSTNESS", "SLOTS", "GRADING", "stability_trace",
           "build_prompt", "score_item", "overall_scores", "significance", "correlation_category", "canonical_answer",
           "split_steps", "correctness", "consistency", "robustness", "logical_coherence", "efficiency",
           "stability", "aggregate", "scenario_scores", "load_scenarios", "check_weights", "rankings",
           "discriminant_validity", "partial_correlation",
           "layer_summary", "STRUCTURAL", "OUTCOME", "TRACE", "temperature_warning", "SAMPLING", "RqevalResult",
           "evaluate",
           "item_frame", "run_scores", "run_items", "stored_runs", "stored_scores", "dataset_scores",
           "template_hash", "NLI_MODEL", "SIMILARITY_MODEL", "SIMILARITY_LAYER", "PAPER_NLI", "PAPER_SIMILARITY",
           "similarity_scorer", "notes"]
