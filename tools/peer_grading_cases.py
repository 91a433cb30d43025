"""Extract the (gold, reply, expected verdict) cases of the field's answer-checker test suites.

    python tools/peer_grading_cases.py SUITE=GIT_DIR ... [--out tests/data/grading]

    python tools/peer_grading_cases.py math-verify=/path/Math-Verify/.git lighteval=/path/lighteval/.git \\
        hendrycks-math=/path/math/.git skyrl=/path/SkyRL/.git open-r1=/path/open-r1/.git

Each GIT_DIR is a clone (or bare mirror) of the suite's public repository; the files are
read at its HEAD with ``git show`` and parsed with :mod:`ast`: nothing of the peer is
imported or run, and none of its code enters kstp. What comes out is data, one JSON
object a line in ``<out>/<suite>.jsonl``:

``id``
    ``file::test[index]``, the index counting the cases of that test in source order.
``repo``, ``commit``, ``file``, ``test``, ``line``
    Where the case is written (the line of the case's first string).
``gold``, ``reply``, ``expected``
    The peer's gold answer, the reply it grades, and its verdict as a boolean.
``settings``
    The peer settings the test passes that differ from the peer's defaults
    (``precision``, ``strict``, ``allow_set_relation_comp``, ``match_types``,
    ``language``, a string-extraction config), empty when there are none.
``scope``
    ``"in"``, or why the case is outside what kstp's default grading claims: an answer
    kind kstp does not claim (multilingual replies, matrices, sets of tuples), a
    non-default peer setting, a case whose peer expectation is wrong, or a convention
    where kstp deliberately differs (each written in the README's grading section).
    The judgements are :data:`SCOPE` below, by case id; the rules in :func:`scope_of`
    cover the settings.

How each suite maps onto ``grade(reply, gold)``: Math-Verify's and lighteval's
``compare_strings(gold, pred)`` (gold first, the reply second), hendrycks/math's
``is_equiv(test_in, test_out)`` (``test_in`` is the gold), SkyRL's ``output`` and
``ground_truth`` (reward 1.0 correct, 0.0 or -1.0 wrong), open-r1's ``accuracy_reward``
completions and solutions. Math-Verify's ``test_string_extraction`` asserts what
``parse`` extracts: the letter extracted (its original case) is the gold, and a reply
where nothing is extracted is graded against gold ``A`` and expected wrong.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: suite -> (GitHub repository, files with their test cases)
SUITES = {
    "math-verify": ("huggingface/Math-Verify", [
        "tests/test_all.py", "tests/test_numina_cases.py", "tests/test_open_thoughts.py", "tests/test_boxed.py",
        "tests/test_strict.py", "tests/test_yujianll.py", "tests/test_string_extraction.py"]),
    "lighteval": ("huggingface/lighteval", ["tests/unit/metrics/test_extractive_match.py"]),
    "hendrycks-math": ("hendrycks/math", ["modeling/math_equivalence_test.py"]),
    "skyrl": ("NovaSky-AI/SkyRL", ["skyrl-gym/tests/test_aime.py", "skyrl-gym/tests/test_gsm8k.py"]),
    "open-r1": ("huggingface/open-r1", ["tests/test_rewards.py"]),
}

#: the defaults of the peers' ``compare_strings`` helpers; a test passing another value is noted
DEFAULTS = {"precision": 6, "strict": True, "allow_set_relation_comp": False, "match_types": ["latex", "expr"],
            "language": "ENGLISH"}

MULTILINGUAL = "out: multilingual reply (a peer language setting; kstp's phrases and numerals are English first)"
PEER_WRONG = "peer error: the expected verdict is wrong"
PROSE_CHOICE_GOLD = ("out: a gold of prose around an option letter (lighteval reads the letter out of it; "
                     "kstp's gold is the letter)")
# kstp's documented conventions (README, grading section, each beside the peer's choice)
DECIMAL_COMMA = "convention: a comma not before exactly three digits separates values (no decimal comma)"
ANY_ORDER = "convention: a list of values is compared in any order"
VALUES = "convention: values are compared, not strings (0.5 is 1/2)"
FORMAT = "convention: the stated answer is graded, not the output format"
ANCHORED = "convention: an option letter counts only where anchored"
CUT = "convention: a reply that stops mid-thought states no answer (as one cut at max_tokens)"

#: Judgements by case id: why a case is not counted in the agreement. Each convention is
#: explained, next to the peer's choice, in the README's grading section.
SCOPE: dict[str, str] = {
    # the peer's own expectation is wrong: 1 - 1/e is not 1 + 1/e (the issue names this case)
    "tests/test_yujianll.py::test_string_extraction[9]": PEER_WRONG,
    **{f"tests/test_all.py::test_number_extraction[{i}]": DECIMAL_COMMA for i in (5, 6, 7)},
    **{f"tests/unit/metrics/test_extractive_match.py::test_number_extraction[{i}]": DECIMAL_COMMA for i in (5, 6, 7)},
    "tests/test_string_extraction.py::test_string_extraction[6]": ANCHORED,
    **{f"tests/unit/metrics/test_extractive_match.py::test_extraction_abc[{i}]": PROSE_CHOICE_GOLD
       for i in (7, 8, 9, 10)},
    "modeling/math_equivalence_test.py::test_order[0]": ANY_ORDER,
    "modeling/math_equivalence_test.py::test_decimals[0]": ANY_ORDER,
    "skyrl-gym/tests/test_aime.py::test_compute_score[4]": VALUES,
    "skyrl-gym/tests/test_aime.py::test_compute_score[7]": FORMAT,
    "skyrl-gym/tests/test_aime.py::test_compute_score[9]": FORMAT,
    "skyrl-gym/tests/test_gsm8k.py::test_compute_score[2]": FORMAT,
    # a reply that answered, began its solution again and was cut in the middle of a sentence ("... In this")
    "tests/test_all.py::test_math_extraction_edge_cases[5]": CUT,
    "tests/unit/metrics/test_extractive_match.py::test_math_extraction_edge_cases[5]": CUT,
}


def git_show(git_dir: Path, path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_head(git_dir: Path) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def value(node: ast.AST):
    """A literal, or a readable stand-in for what is not one (``Language.FRENCH`` -> ``"FRENCH"``)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.JoinedStr):  # f"{math.sqrt(17):.15f}": a math function of literals, formatted
            return "".join(formatted(part) for part in node.values)
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Call):
            return ast.unparse(node)
        raise


def formatted(part: ast.AST) -> str:
    import math

    if isinstance(part, ast.Constant):
        return str(part.value)
    call = part.value
    if not (isinstance(call, ast.Call) and ast.unparse(call.func).startswith("math.")):
        raise ValueError(f"cannot read {ast.unparse(part)!r}")
    number = getattr(math, call.func.attr)(*(ast.literal_eval(a) for a in call.args))
    return format(number, "".join(formatted(p) for p in part.format_spec.values) if part.format_spec else "")


def keywords(call: ast.Call, names: list[str]) -> dict:
    """The settings a helper call passes: literal keyword values, or the parameter they name."""
    settings = {}
    for kw in call.keywords:
        if isinstance(kw.value, ast.Name) and kw.value.id in names:
            settings[kw.arg] = ("param", kw.value.id)
        else:
            settings[kw.arg] = value(kw.value)
    return settings


def helper_call(fn: ast.FunctionDef, helper: str) -> ast.Call | None:
    return next((n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == helper), None)


def parametrized(tree: ast.Module):
    """(function, argument names, [(line, values)]) of every ``pytest.mark.parametrize`` test."""
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("parametrize"):
                names = [n.strip() for n in ast.literal_eval(dec.args[0]).split(",")]
                rows = [(row.lineno, [value(v) for v in row.elts]) for row in dec.args[1].elts]
                yield fn, names, rows


def compare_cases(tree: ast.Module, helper: str = "compare_strings"):
    """Cases of the ``compare_strings(gold, pred, ...) == expected`` suites (Math-Verify, lighteval)."""
    for fn, names, rows in parametrized(tree):
        call = helper_call(fn, helper)
        for index, (line, row) in enumerate(rows):
            params = dict(zip(names, row, strict=True))
            if call is None:  # Math-Verify's own verify(parse(gold), parse(pred)) tests
                yield fn.name, index, line, params["gold"], params["pred"], params.get("result"), {}
                continue
            settings = {}
            for i, arg in enumerate(call.args[2:]):  # positional: language, match_types
                settings[["language", "match_types"][i]] = params[arg.id] if isinstance(arg, ast.Name) else value(arg)
            for key, val in keywords(call, names).items():
                settings[key] = params[val[1]] if isinstance(val, tuple) else val
            expected = params.get("expected", params.get("result"))
            yield fn.name, index, line, params["gold"], params["pred"], expected, settings
    for fn in tree.body:  # direct calls outside parametrize: test_precision's compare_strings(...) == 1
        if not isinstance(fn, ast.FunctionDef) or any(isinstance(d, ast.Call) for d in fn.decorator_list):
            continue
        index = 0
        for node in ast.walk(fn):
            if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                    and getattr(node.left.func, "id", None) == helper):
                call = node.left
                settings = {kw.arg: value(kw.value) for kw in call.keywords}
                yield (fn.name, index, call.lineno, value(call.args[0]), value(call.args[1]),
                       value(node.comparators[0]), settings)
                index += 1


def string_extraction_cases(tree: ast.Module):
    """Math-Verify's ``test_string_extraction``: the extracted letter is the gold."""
    for fn, names, rows in parametrized(tree):
        for index, (line, row) in enumerate(rows):
            params = dict(zip(names, row, strict=True))
            extracted = params["expected"]
            config = params["config"]
            settings = {} if config in ("StringExtractionConfig()", "StringExtractionConfig(lowercase=True)",
                                        "StringExtractionConfig(lowercase=False)") else {"config": config}
            gold = extracted[1] if extracted else "A"
            yield fn.name, index, line, gold, params["pred"], bool(extracted), settings


def assignments(fn: ast.FunctionDef) -> dict:
    return {t.id: value(n.value) for n in fn.body if isinstance(n, ast.Assign)
            for t in n.targets if isinstance(t, ast.Name) and not isinstance(n.value, ast.Call)}


def hendrycks_cases(tree: ast.Module):
    """hendrycks/math: ``self.assertTrue/False(is_equiv(test_in, test_out))``, one case a method."""
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")):
            names = assignments(fn)
            check = next(n for n in ast.walk(fn) if isinstance(n, ast.Call)
                         and getattr(n.func, "attr", "") in ("assertTrue", "assertFalse"))
            line = next(n.lineno for n in fn.body if isinstance(n, ast.Assign))
            yield fn.name, 0, line, names["test_in"], names["test_out"], check.func.attr == "assertTrue", {}


def open_r1_cases(tree: ast.Module):
    """open-r1: ``accuracy_reward(completions, solutions)`` and ``assertEqual(rewards[i], reward)``."""
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            if helper_call(fn, "accuracy_reward") is None:
                continue
            names = assignments(fn)
            completions = names.get("completion") or names.get("completions")
            solutions = names.get("solution") or names.get("solutions")
            line = next(n.lineno for n in fn.body if isinstance(n, ast.Assign))
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "assertEqual"
                        and isinstance(node.args[0], ast.Subscript)):
                    i = value(node.args[0].slice)
                    reward = value(node.args[1])
                    yield fn.name, i, line, solutions[i], completions[i][0]["content"], reward == 1.0, {}


def skyrl_cases(tree: ast.Module):
    """SkyRL: ``(output, ground_truth, expected reward)``; a positive reward is correct."""
    for fn, names, rows in parametrized(tree):
        for index, (line, row) in enumerate(rows):
            params = dict(zip(names, row, strict=True))
            yield fn.name, index, line, params["ground_truth"], params["output"], params["expected"] > 0, {}


def scope_of(case_id: str, settings: dict) -> str:
    if case_id in SCOPE:
        return SCOPE[case_id]
    if settings.get("language", "ENGLISH") != "ENGLISH":
        return MULTILINGUAL
    for key in ("precision", "strict", "allow_set_relation_comp", "config"):
        if key in settings:
            return f"out: non-default peer setting {key}={settings[key]!r}"
    return "in"


def extract(suite: str, git_dir: Path) -> list[dict]:
    repo, files = SUITES[suite]
    commit = git_head(git_dir)
    cases = []
    for path in files:
        tree = ast.parse(git_show(git_dir, path))
        if suite == "hendrycks-math":
            found = hendrycks_cases(tree)
        elif suite == "open-r1":
            found = open_r1_cases(tree)
        elif suite == "skyrl":
            found = skyrl_cases(tree)
        elif path.endswith("test_string_extraction.py"):
            found = string_extraction_cases(tree)
        else:
            found = compare_cases(tree)
        for test, index, line, gold, reply, expected, settings in found:
            settings = {k: v for k, v in settings.items() if DEFAULTS.get(k, object()) != v}
            case_id = f"{path}::{test}[{index}]"
            cases.append({"id": case_id, "repo": repo, "commit": commit, "file": path, "test": test, "line": line,
                          "gold": str(gold), "reply": str(reply), "expected": bool(expected),
                          "settings": settings, "scope": scope_of(case_id, settings)})
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", metavar="SUITE=GIT_DIR", help=f"suites: {', '.join(SUITES)}")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "grading")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for source in args.sources:
        suite, _, git_dir = source.partition("=")
        if suite not in SUITES:
            parser.error(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
        cases = extract(suite, Path(git_dir))
        with open(args.out / f"{suite}.jsonl", "w", encoding="utf-8") as out:
            for case in cases:
                out.write(json.dumps(case, ensure_ascii=False) + "\n")
        counted = sum(case["scope"] == "in" for case in cases)
        print(f"{suite}: {len(cases)} cases ({counted} in scope) -> {args.out / f'{suite}.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
