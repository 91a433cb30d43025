"""Paper 3, RQEval (Senol, Agrawal, Liu 2026, arXiv 2605.24661), as a package; see :mod:`.results`."""

from kstp.evaluators.rqeval.results import *  # noqa: F403
from kstp.evaluators.rqeval.results import LONG_NAMES  # noqa: F401
from kstp.evaluators.rqeval.results import __all__  # noqa: F401
