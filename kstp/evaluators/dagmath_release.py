"""DAG-MATH generation as the authors' release does it: their few-shot prompt file, their malformed-reply policy.

The paper (§5, Appendix E) prompts each model with a 4-shot prompt; its release
(github.com/YuanheZ/DAG-MATH-Formatted-CoT, ``openai_api/``) keeps that prompt in one
file, ``fewshot_instructions.txt``: instructions followed by four demonstrations
(Problem / Solution JSON). The release sends the whole file, read as UTF-8 text, as the
system message and ``"Problem: <problem, stripped>\\n\\nSolution:"`` as the only user
message (``prompting.py``), with a strict JSON schema of ``{"steps": [...]}`` (``models.py``).
kstp does not ship the file (the user's copy is read as it is, never edited); it records
the file's name and the SHA-256 of its bytes on the Run.

A reply the release cannot parse into that schema (no JSON object, a missing or mistyped
field) is asked again (``run_hf_dataset_batch.py``: ``--retry-mode max --max-retries 2``,
whose check gives up on a request once it has failed twice: two attempts in all), and a
problem that still has a malformed sample after the last retry is left out *whole*:
``release:1`` here. kstp's ``retry:N`` leaves out only that sample (a problem with one
good and one hopeless sample keeps the good one: on such a toy PASS@1 is 1.0 under
``retry:1`` and 0.5 under ``release:1``, which drops the problem). A reply that
parses but is not a DAG (a cycle, an unknown or later parent, a duplicate id), has a step
with an empty conclusion or boxes no answer passes the schema and is kept. One departure:
a reply cut at ``max_tokens`` is kept as a failure, not retried and dropped
(:data:`RETRIED_FAILURES`). :func:`kept_trajectories` applies that policy to a
run's stored replies; kstp's own policy, ``fail``, keeps every reply in the denominators.

References
----------
Zhang, Kuzborskij, Lee, Leng, Liu 2025, "DAG-Math: Graph-Guided Mathematical Reasoning
in LLMs", §5 (4-shot, 32 trajectories per problem), Appendix E (the few-shot prompt)
(arXiv 2510.19842).
"""

from __future__ import annotations

import errno
import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kstp.errors import ConfigError
from kstp.inference.backend import Message

__all__ = ["USER_TEMPLATE", "PromptFile", "read_prompt_file", "file_prompt", "MalformedPolicy", "FAIL",
           "parse_malformed", "RETRIED_FAILURES", "kept_trajectories"]

#: The release's user message (``openai_api/prompting.py``, ``build_user_prompt``).
USER_TEMPLATE = "Problem: {text}\n\nSolution:"
#: Fields a DAG-MATH prompt file names: a file without them is not one.
_FIELDS = ("step_id", "direct_dependent_steps")


@dataclass(frozen=True)
class PromptFile:
    """A few-shot prompt file as read: its file name, the SHA-256 of its bytes and its text."""

    name: str
    sha256: str
    text: str


#: The largest prompt file read: the release's is 59,006 bytes; a system message far past it is no prompt file.
MAX_PROMPT_BYTES = 1_000_000


def read_prompt_file(path: str | Path) -> PromptFile:
    """Read the authors' few-shot prompt file (``fewshot_instructions.txt``) as the release reads it.

    The text is the file decoded as UTF-8 with universal newlines (Python's
    ``Path.read_text``, as ``prompting.load_system_prompt``); the hash is over the raw bytes,
    so ``sha256sum`` of the file gives the same value.

    Raises
    ------
    ConfigError
        When the file is missing or unreadable, not UTF-8, empty, or names neither DAG-MATH
        field (``step_id``, ``direct_dependent_steps``).
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file")
        size = path.stat().st_size
        if size > MAX_PROMPT_BYTES or (size == 0 and not path.is_file()):  # /dev/zero and pipes report 0
            raise ConfigError(f"the prompt file {path} is not a text file of at most {MAX_PROMPT_BYTES:,} bytes (the "
                              "release's is 59,006); pass the release's fewshot_instructions.txt")
        raw = path.read_bytes()
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except OSError as exc:
        raise ConfigError(f"cannot read the prompt file {path}: {exc.strerror or exc}; pass the path of the "
                          "release's openai_api/fewshot_instructions.txt") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the prompt file {path} is not UTF-8 text (byte {exc.start}); pass the release's "
                          "fewshot_instructions.txt as downloaded") from None
    if not text.strip():
        raise ConfigError(f"the prompt file {path} is empty; pass the release's fewshot_instructions.txt")
    if "\x00" in text:
        raise ConfigError(f"the prompt file {path} holds NUL bytes (byte {raw.index(0)}): not a text file; pass the "
                          "release's fewshot_instructions.txt")
    if not all(field in text for field in _FIELDS):
        raise ConfigError(f"the prompt file {path} does not describe the DAG-MATH format (it names neither "
                          f"{' nor '.join(_FIELDS)}); pass the release's fewshot_instructions.txt")
    return PromptFile(path.name, hashlib.sha256(raw).hexdigest(), text)


def file_prompt(prompt: PromptFile, problem: str) -> list[Message]:
    """The release's chat for one problem: the whole file as the system message, then the problem.

    >>> p = PromptFile("f.txt", "0" * 64, "Give step_id and direct_dependent_steps.")
    >>> file_prompt(p, "  1 + 1?\\n")[1]["content"]
    'Problem: 1 + 1?\\n\\nSolution:'
    """
    return [{"role": "system", "content": prompt.text},
            {"role": "user", "content": USER_TEMPLATE.format(text=problem.strip())}]


#: Failure kinds (:func:`kstp.evaluators.dagmath.failure_kind`) the release's schema check refuses: the ones
#: ``retry:N`` asks again. A reply cut at max_tokens is unparseable JSON there too, but kstp keeps it as a
#: failure ("truncated", not retried, not dropped): dropping it would take the longest trajectories silently
#: out of the figures, while kept it stays in them and in the summary's truncation line, where a larger
#: ``max_tokens`` is the remedy. A step with an empty conclusion passes the release's schema (``text: str``
#: takes ""), so its kind, "empty conclusion", is kept as the DAG faults are.
RETRIED_FAILURES = frozenset({"empty output", "invalid JSON", "malformed"})


@dataclass(frozen=True)
class MalformedPolicy:
    """What a malformed reply becomes: ``retries`` = 0 is kstp's ``fail`` (kept, counted as a failure);
    ``retries`` = N >= 1 asks it again up to N times, then drops its sample (``retry:N``) or, with
    ``whole``, every sample of its problem (``release:N``, the authors' release)."""

    retries: int = 0
    whole: bool = False

    def __str__(self) -> str:
        return f"{'release' if self.whole else 'retry'}:{self.retries}" if self.retries else "fail"


#: kstp's policy, the default: a malformed reply is kept and counted as a failure.
FAIL = MalformedPolicy()


#: Most retries ``retry:N`` takes: each is a whole generation of every malformed slot, so a model that never
#: keeps the format costs N + 1 runs' worth of requests (the release's default is 1).
MAX_RETRIES = 10


def parse_malformed(text: str) -> MalformedPolicy:
    """``fail``, ``retry:N`` or ``release:N`` (1 <= N <= :data:`MAX_RETRIES`).

    >>> parse_malformed("fail"), parse_malformed("retry:2").retries, str(parse_malformed("release:1"))
    (MalformedPolicy(retries=0, whole=False), 2, 'release:1')

    Raises
    ------
    ConfigError
        For anything else.
    """
    if text == "fail":
        return MalformedPolicy()
    head, _, count = text.partition(":")
    if head in ("retry", "release") and count.isascii() and count.isdigit() and 1 <= int(count) <= MAX_RETRIES:
        return MalformedPolicy(int(count), head == "release")
    raise ConfigError(f"malformed-reply policy {text!r}: use fail (count it as a failure), retry:N (ask again up to "
                      f"N times, then drop the sample) or release:N (then drop the whole problem, as the authors' "
                      f"release), 1 <= N <= {MAX_RETRIES}")


def kept_trajectories(metrics: pd.DataFrame, samples: int, policy: MalformedPolicy) -> tuple[pd.DataFrame, int]:
    """The trajectories a policy keeps, and how many sample slots it dropped.

    Under ``retry:N`` sample ``s`` of a problem (0 <= s < ``samples``) is a slot; attempt
    ``a`` of it is sample index ``s + a * samples`` (its own seed). A slot keeps its first
    attempt that is not malformed (:data:`RETRIED_FAILURES`); a slot whose stored attempts
    are all malformed is dropped, and every attempt a slot did not keep is left out. A
    reply cut at ``max_tokens`` is no malformed one here: its slot keeps it, a failure.
    Under ``release:N`` (``whole``) a problem with a dropped slot is left out whole, all
    its slots counted as dropped. Under ``fail`` every row is kept.

    Parameters
    ----------
    metrics : pandas.DataFrame
        :func:`kstp.evaluators.dagmath.run_metrics`: ``questionId, sampleIndex, failure``.

    Examples
    --------
    Three slots of one problem: slot 0 malformed then valid, slot 1 malformed twice, slot 2
    cut at max_tokens (kept, never asked again).

    >>> m = pd.DataFrame({"questionId": "p", "sampleIndex": [0, 1, 2, 3, 4],
    ...                   "failure": ["invalid JSON", "empty output", "truncated", None, "malformed"]})
    >>> kept, dropped = kept_trajectories(m, 3, MalformedPolicy(1))
    >>> kept["sampleIndex"].tolist(), dropped
    ([2, 3], 1)
    >>> kept_trajectories(m, 3, MalformedPolicy(1, whole=True))
    (Empty DataFrame
    Columns: [questionId, sampleIndex, failure]
    Index: [], 3)
    """
    if not policy.retries or metrics.empty:
        return metrics, 0
    index = metrics["sampleIndex"].astype(int)
    frame = metrics.assign(_slot=index % samples, _attempt=index // samples,
                           _bad=metrics["failure"].isin(RETRIED_FAILURES))
    frame = frame[frame["_attempt"] <= policy.retries].sort_values(["questionId", "_slot", "_attempt"])
    good = frame[~frame["_bad"]].drop_duplicates(["questionId", "_slot"])
    slots = frame[["questionId", "_slot"]].drop_duplicates()
    kept = metrics.loc[good.index].sort_values(["questionId", "sampleIndex"])
    if policy.whole:  # the release: a problem with a sample still malformed is left out whole
        kept_slots = good.groupby("questionId").size()
        whole = kept_slots[kept_slots == slots.groupby("questionId").size().reindex(kept_slots.index)].index
        lost = ~slots["questionId"].isin(whole)
        return kept[kept["questionId"].isin(whole)], int(lost.sum())
    return kept, len(slots) - len(good)
