"""Answer checking: find a model's final answer in its reply and compare it with the gold answer.

One call, :func:`grade`, reads the gold (its answer type and how it is compared), finds
the answer the reply states and compares the two; the verdict says what was extracted,
where, and why it failed. The work is split by idea:

- :mod:`~kstp.inference.grading.extraction`: where a reply states its final answer (boxes,
  the ``####`` delimiter, answer phrases, math spans; the latest statement counts);
- :mod:`~kstp.inference.grading.golds`: reading a gold answer (its type, a unit set aside,
  a worked solution's box; a gold kstp cannot read whole is compared whole);
- :mod:`~kstp.inference.grading.numbers`: reading a stated answer as a value (numbers,
  constants, lists);
- :mod:`~kstp.inference.grading.symbolic`: formulas through math-verify and sympy;
- :mod:`~kstp.inference.grading.choices`: option letters and yes/no;
- :mod:`~kstp.inference.grading.compare`: comparing by type, and :func:`grade`;
- :mod:`~kstp.inference.grading.limits`: what grading one reply may cost (sizes refused
  before any work, a time budget): no reply can stall the grader.

The grader is held to the field's own test suites (Math-Verify, lighteval,
hendrycks/math, SkyRL, open-r1): their cases are data in ``tests/data/grading/``, and
``python -m benchmarks grading`` prints the agreement with each; the README's grading
section lists the conventions where kstp differs from a peer, with the reason.

Examples
--------
>>> from kstp.inference.grading import grade
>>> grade(r"so the price is \\boxed{\\$9{,}500}", "9500").correct
True
>>> grade("The answer is clearly D.", "D").extracted
'D'
"""

from kstp.inference.grading.choices import option_count, option_texts
from kstp.inference.grading.compare import Verdict, grade
from kstp.inference.grading.extraction import extract_final
from kstp.inference.grading.golds import KINDS, GoldReading, infer_kind, read_gold
from kstp.inference.grading.numbers import PERCENT_POLICIES, parse_number

#: The grader's version, recorded on every Response it grades in a run (``graderVersion``). Bump it when a change
#: of the grader changes verdicts: a run asked again grades its stored replies of another version again before
#: it asks anything, so a grade stored by an older kstp is never final (issue 41: a box inside a reasoning trace
#: was taken for the answer and kept).
GRADER_VERSION = "2026.12.1"

__all__ = ["GRADER_VERSION", "KINDS", "PERCENT_POLICIES", "Verdict", "GoldReading", "grade", "extract_final",
           "parse_number", "infer_kind", "read_gold", "option_count", "option_texts"]
