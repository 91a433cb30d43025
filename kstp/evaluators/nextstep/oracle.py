"""Paper 2's deterministic recommender: the backend ``fringe-oracle``, right on every cell.

:class:`FringeOracle` reads a prompt like any model, computes the outer fringe from the
catalogue and answers in the schema; it scores 100% and is the reference
implementation in the tests. It registers itself as a backend when imported.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5. Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence

from kstp.errors import UnknownIdError
from kstp.inference.backend import Completion, Emit, Message, Request, Streaming, register_backend
from kstp.loaders.catalogues import Catalogue

__all__ = ["FringeOracle"]

_TASK_LINE = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)
_MASTERED = re.compile(r"Tasks the learner has mastered: (.*)\.$", re.MULTILINE)


@register_backend("fringe-oracle")
class FringeOracle(Streaming):
    """A "model" that reads the prompt, computes the outer fringe and answers in the schema.

    It recognises the catalogue by the set of task descriptions in the prompt, maps
    the shown positions back to tasks, and recommends exactly the outer fringe of
    the mastered set (P1: with the direct pairs). It never sees the reference the
    scorer uses, only the prompt, so a perfect score checks the whole pipeline.

    Parameters
    ----------
    catalogues : sequence of Catalogue
        The catalogues it may be asked about.
    """

    name = "fringe-oracle"
    window = 1

    def __init__(self, model: str = "fringe-oracle", catalogues: Sequence[Catalogue] = ()):
        self.model = model
        self._by_tasks = {frozenset(t.description for t in c.tasks): c for c in catalogues}

    def answer(self, messages: list[Message]) -> str:
        """The JSON answer to one prompt of :func:`kstp.evaluators.nextstep.prompts.build_prompt`.

        Raises
        ------
        UnknownIdError
            When the prompt's tasks are those of no known catalogue.
        """
        user = messages[-1]["content"]
        shown = {int(k): d for k, d in _TASK_LINE.findall(user.split("\n\n", 1)[0])}
        catalogue = self._by_tasks.get(frozenset(shown.values()))
        if catalogue is None:
            raise UnknownIdError("the prompt lists tasks of no catalogue the fringe oracle was given")
        by_description = {t.description: t.id for t in catalogue.tasks}
        task_at = {k: by_description[d] for k, d in shown.items()}
        position = {t: k for k, t in task_at.items()}
        mastered = _MASTERED.search(user).group(1)
        state = {task_at[int(k)] for k in mastered.split(", ")} if mastered != "none" else set()
        fringe = catalogue.space().outer_fringe(state)
        answer: dict = {"recommendations": [{"position": position[t], "justification": "all its prerequisites are "
                                             "mastered"} for t in sorted(fringe, key=position.get)],
                        "noRecommendationReason": None if fringe else "every task is already mastered"}
        if '"prerequisitePairs"' in user:
            answer = {"prerequisitePairs": sorted([position[p], position[q]] for p, q in catalogue.prerequisites),
                      **answer}
        return json.dumps(answer)

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """Answer each request at once, in order (see :meth:`kstp.inference.backend.Backend.stream`)."""
        for request in requests:
            if stop.is_set():
                return
            emit(request.key, Completion(request.sample_index, request.sampling.seed,
                                         text=self.answer(request.messages), finish_reason="stop"))

    def close(self) -> None:
        """Nothing to release."""
