"""Adaptive assessment (``kstp assess``): a learner's, or a model's, knowledge state from a few well-chosen questions.

Knowledge space theory was made for this (Doignon & Falmagne 1999, ch. 10-11; ALEKS):
with a knowledge structure and a BLIM (state probabilities, careless and guessing
rates), each answer reweights the states, the next question is the one that best splits
what is left, and the assessment stops once one state is likely enough. The mathematics
is in :mod:`kstp.kst.assess` (listed structures, held to R's mycaas) and
:mod:`kstp.kst.assess_large` (the surmise relation, at XES3G5M scale); this package
joins it to the graph:

- :mod:`.model`: the structure, rates and prior, from the dataset's BLIM fit on the
  graph (``kstp fit blim``), its derived prerequisites (the surmise relation) or a
  structure file;
- :mod:`.session`: a person's interactive assessment, each typed answer graded by kstp's
  grader and stored at once as the learner's ANSWERED edge, resumable;
- :mod:`.llm`: a model's assessment through the run engine (the chosen questions only,
  several at a time), stored as a Run of evaluator ``assess``;
- :mod:`.replay`: recorded learners replayed adaptively (leave one out of the fit),
  stored model runs replayed, and the simulation study on a fit.

Every assessment is a ``(:Run {evaluator: 'assess'})`` with the learner's id, its path
(questions in order, answers, posterior after each), the state with its fringes and the
predicted accuracy and PSR over all questions (``Run.assessment``, JSON). Higher is
better for none of the path figures; ``exact``, ``withinOne`` (recovery) and lower
``asked`` and ``distance`` are better in a study.
"""

from kstp.evaluators.assess.model import VERSION, AssessmentModel, load_model

__all__ = ["NAME", "VERSION", "AssessmentModel", "load_model"]

NAME = "assess"
