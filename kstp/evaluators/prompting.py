"""Prompt templates of the answers evaluation: a built-in set, or a prompt file, with few-shot exemplars.

A template is a system text and a user template with placeholders: ``{question}`` (the
question's text without its options), ``{options}`` (its option lines, ``A. ...``,
empty for an open question) and ``{text}`` (the whole text, options included, as the
built-in sets use it). A user template without ``{options}`` gets the options inside
``{question}``, so no template loses them. Placeholders are replaced as they are
written and nothing else is read from the template, so LaTeX braces (``\\boxed{}``) need
no escaping. Few-shot exemplars (``question``, ``answer``, optional ``options`` and
``solution``) become user and assistant turns before the question: the user turn
through the same template, the assistant turn the ``shot_answer`` template
(``{solution}``, ``{answer}``; default: the solution, then ``\\boxed{answer}``).

The template's hash is part of the run's identity: a built-in set without exemplars
hashes as it always did (its texts joined), anything else by its texts and exemplars.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kstp.errors import ConfigError, InputError
from kstp.inference.backend import Message
from kstp.inference.grading.choices import split_options

__all__ = ["PromptTemplate", "load_prompt_file", "load_shots", "DEFAULT_SHOT_ANSWER", "EXAMPLE_PROMPT_FILE"]

#: The assistant turn of an exemplar unless the prompt file says otherwise.
DEFAULT_SHOT_ANSWER = "{solution}\n\nThe final answer is \\boxed{{answer}}."

def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced, in one pass (a value's own braces stay).

    >>> _fill("Q: {question} {} {other}", {"question": "{text}?", "text": "no"})
    'Q: {text}? {} {other}'
    """
    pattern = re.compile("|".join(re.escape("{" + name + "}") for name in values))
    return pattern.sub(lambda m: values[m.group(0)[1:-1]], template)


@dataclass(frozen=True)
class PromptTemplate:
    """A system text, a user template and few-shot exemplars.

    Attributes
    ----------
    name : str
        A built-in set's name (``kstp``, ``paper``) or the prompt file's name.
    system, user : str
        The system text (empty: no system turn) and the user template.
    shots : tuple of dict
        Exemplars: ``question``, ``answer``, optional ``options`` (lines) and ``solution``.
    shot_answer : str
        The assistant turn of an exemplar (``{solution}``, ``{answer}``).
    builtin_hash : str or None
        The hash a built-in set without exemplars has always had.
    """

    name: str
    system: str
    user: str
    shots: tuple[dict, ...] = ()
    shot_answer: str = DEFAULT_SHOT_ANSWER
    builtin_hash: str | None = field(default=None, compare=False)

    def hash(self) -> str:
        """The template's identity (see the module docstring).

        >>> PromptTemplate("mine", "Be brief.", "Q: {question}").hash()[:12]
        '93a5c92d7bf9'
        """
        if self.builtin_hash is not None and not self.shots:
            return self.builtin_hash
        spec = {"system": self.system, "user": self.user, "shots": list(self.shots), "shotAnswer": self.shot_answer}
        return hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def _user(self, text: str) -> str:
        question, options = split_options(text)
        if "{options}" not in self.user:
            question = text
        return _fill(self.user, {"question": question, "options": options, "text": text})

    def chat(self, text: str) -> list[Message]:
        """The chat for one question: system, exemplars as user and assistant turns, then the question.

        >>> t = PromptTemplate("mine", "", "Q: {question}\\n{options}", ({"question": "1 + 1?", "answer": "2"},))
        >>> [m["content"] for m in t.chat("Pick:\\nA. 3\\nB. 4")]
        ['Q: 1 + 1?\\n', 'The final answer is \\\\boxed{2}.', 'Q: Pick:\\nA. 3\\nB. 4']
        """
        chat = [{"role": "system", "content": self.system}] if self.system else []
        for shot in self.shots:
            text_of_shot = shot["question"] + (f"\n{shot['options']}" if shot.get("options") else "")
            answer = _fill(self.shot_answer, {"solution": shot.get("solution") or "", "answer": str(shot["answer"])})
            chat += [{"role": "user", "content": self._user(text_of_shot)},
                     {"role": "assistant", "content": answer.strip()}]
        return [*chat, {"role": "user", "content": self._user(text)}]

    def record(self) -> dict:
        """What a run records of its template (its log's ``promptTemplate``)."""
        return {"name": self.name, "system": self.system, "user": self.user,
                **({"shots": list(self.shots), "shotAnswer": self.shot_answer} if self.shots else {})}


#: The placeholders each template of a prompt file takes.
_PLACEHOLDERS = {"user": ("question", "options", "text"), "shot_answer": ("solution", "answer")}
# a {name} that is no LaTeX group: not right after a command (\boxed{x}), a group (\frac{a}{b}), ^ or _
_PLACEHOLDER_RE = re.compile(r"(?<![A-Za-z}^_\\])\{([A-Za-z_]\w*)\}")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: The example prompt file kstp ships (``kstp/evaluators/example_prompt_file.yaml``): copy it to begin.
EXAMPLE_PROMPT_FILE = Path(__file__).resolve().parent / "example_prompt_file.yaml"


def _check_texts(path: Path, spec: dict) -> None:
    """Refuse a placeholder no template takes (it would be sent as written) and a control character (YAML's
    ``"\\b"`` in double quotes is a backspace, ``"\\f"`` a form feed: ``\\boxed`` would lose its backslash)."""
    for key in ("system", "user", "shot_answer"):
        text = spec.get(key)
        if not isinstance(text, str):
            continue
        if (bad := _CONTROL_RE.search(text)) is not None:
            raise InputError(f"{path}: the {key} text holds the control character {bad.group()!r} near "
                             f"{text[max(0, bad.start() - 10):bad.start() + 10]!r}: in YAML's double quotes \\b is "
                             "a backspace; write \\\\b there, or use single quotes or a block scalar (|)")
        unknown = [m.group(1) for m in _PLACEHOLDER_RE.finditer(text) if m.group(1) not in _PLACEHOLDERS.get(key, ())]
        if unknown and key in _PLACEHOLDERS:
            takes = ", ".join("{" + name + "}" for name in _PLACEHOLDERS[key])
            raise InputError(f"{path}: the {key} template has the placeholder {{{unknown[0]}}}, which nothing fills "
                             f"(it would be sent as written); it takes {takes}")


def load_prompt_file(path: str | Path) -> PromptTemplate:
    """A prompt file: YAML (or JSON) with ``user`` and optional ``system`` and ``shot_answer``
    (:data:`EXAMPLE_PROMPT_FILE` is one to copy).

    Raises
    ------
    InputError
        When the file cannot be read, is not a mapping, has no ``user`` template with
        ``{question}`` or ``{text}``, a placeholder its template does not take (``{foo}``),
        or a control character (YAML's ``"\\b"`` in double quotes).

    Examples
    --------
    >>> load_prompt_file(EXAMPLE_PROMPT_FILE).chat("2 + 3?")[1]["content"]
    'Problem:\\n2 + 3?\\n'
    """
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: not a prompt file ({exc})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("user"), str):
        raise InputError(f"{path}: a prompt file is a mapping with a 'user' template (and 'system'); "
                         f"it has {', '.join(spec) if isinstance(spec, dict) else type(spec).__name__}")
    if "{question}" not in spec["user"] and "{text}" not in spec["user"]:
        raise InputError(f"{path}: the user template has no {{question}} (or {{text}}): the question would be lost")
    unknown = sorted(set(spec) - {"system", "user", "shot_answer", "source"})
    if unknown:
        raise InputError(f"{path}: unknown key {unknown[0]!r}; a prompt file has system, user, shot_answer")
    _check_texts(path, spec)
    return PromptTemplate(path.name, str(spec.get("system") or ""), spec["user"],
                          shot_answer=str(spec.get("shot_answer") or DEFAULT_SHOT_ANSWER))


def load_shots(path: str | Path, count: int | None = None) -> tuple[dict, ...]:
    """Few-shot exemplars from records (JSON lines, Parquet, ...: ``question``, ``answer``, ``options``,
    ``solution``), the first ``count`` of them (all without it).

    Raises
    ------
    InputError
        When a record lacks a question or an answer, or the file has fewer than ``count``.
    """
    from kstp.loaders.records import option_lines, read_records

    records, source = read_records(path)
    shots = []
    for number, record in enumerate(records, 1):
        question = record.get("question", record.get("text"))
        if question is None or record.get("answer") is None:
            raise InputError(f"{source}:{number}: an exemplar needs a question (or text) and an answer")
        options = record.get("options")
        shots.append({"question": str(question), "answer": str(record["answer"]),
                      **({"options": "\n".join(option_lines(options))} if options else {}),
                      **({"solution": str(record["solution"])} if record.get("solution") else {})})
    if not shots:
        raise InputError(f"{source} has no exemplars: --few-shot would run zero-shot; give a file with records "
                         "of question and answer, or leave --few-shot out")
    if count is not None and count > len(shots):
        raise ConfigError(f"{source} has {len(shots)} exemplars; --num-fewshot {count} asks for more")
    return tuple(shots[:count] if count is not None else shots)
