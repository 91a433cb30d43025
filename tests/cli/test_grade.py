"""``kstp grade`` shows the verdict of the answer checker for one reply."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli


@pytest.mark.parametrize("reply, gold, extracted, correct", [
    (r"so \boxed{1\frac{7}{8}}", "15/8", "15/8", True),
    (r"\boxed{45,\!000}", "45000", "45000", True),
    (r"\boxed{3\pi}", "3", r"3\pi", False),
    ("The answer is 40, in all, so 25 and 15 ...", "40", "40", True),
])
def test_grade_cli_reports_the_extracted_answer_and_verdict(reply, gold, extracted, correct):
    result = CliRunner().invoke(cli, ["grade", "--gold", gold, "--json", reply])
    assert result.exit_code == 0
    verdict = json.loads(result.output)
    assert (verdict["extracted"], verdict["correct"]) == (extracted, correct)


@pytest.mark.parametrize("args, stdin", [
    (["--gold", "-3", "--json", "-3"], None),
    (["--json", "--gold", "-3", "--", "-3"], None),
    (["--gold=-3", "- so x = -3", "--json"], None),
    (["--json", "--gold", "-3", "-"], "- so x = -3\n"),
])
def test_grade_cli_takes_a_negative_gold_and_a_dash_reply_without_double_dash(args, stdin):
    result = CliRunner().invoke(cli, ["grade", *args], input=stdin)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"kind": "number", "extracted": "-3", "method": "last-number",
                                         "correct": True, "reason": "correct", "trace": None,
                                         "reading": "number -3"}


def test_grade_cli_still_refuses_a_mistyped_option():
    result = CliRunner().invoke(cli, ["grade", "--gold", "3", "--jsn", "3"])
    assert result.exit_code == 2 and "No such option '--jsn'" in result.output


def test_grade_cli_ambiguous_yes_no_shows_no_extracted_answer():
    result = CliRunner().invoke(cli, ["grade", "--gold", "yes", "Yes and no."])
    assert result.exit_code == 0
    assert result.output.splitlines() == ["extracted: (none)", "type:      yesno", "gold:      yes/no: yes",
                                          "verdict:   incorrect (no answer found)"]


@pytest.mark.parametrize("gold, reply, reading, reason", [
    # issue 32, §1: a gold holding a word is read whole, and the output says how
    (r"6\sqrt{2}\text{ inches}", r"\boxed{6}",
     "number 6\\sqrt{2} (a constant, compared to 40 digits; unit 'inches' set aside)", "wrong answer"),
    (r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\boxed{1}", "matrix, compared whole through math-verify",
     "wrong answer"),
    # issue 32, §3: a power tower is refused at once, not computed
    ("5", r"\boxed{10^{10^{10^{10}}}}", "number 5", "not gradable: too large (a power or factorial past 10^10000)"),
])
def test_grade_cli_says_how_the_gold_was_read(gold, reply, reading, reason):
    result = CliRunner().invoke(cli, ["grade", "--gold", gold, reply])
    assert result.exit_code == 0, result.output
    assert f"gold:      {reading}" in result.output.splitlines()
    assert result.output.splitlines()[-1] == f"verdict:   incorrect ({reason})"


def test_grade_cli_option_count():
    result = CliRunner().invoke(cli, ["grade", "--gold", "A", "--options", "4", "--json", "Answer: I"])
    assert (result.exit_code, json.loads(result.output)["reason"]) == (0, "no answer found")
    result = CliRunner().invoke(cli, ["grade", "--gold", "I", "--options", "10", "--json", "Answer: I"])
    assert (result.exit_code, json.loads(result.output)["correct"]) == (0, True)
    assert CliRunner().invoke(cli, ["grade", "--gold", "A", "--options", "11", "A"]).exit_code == 2
    result = CliRunner().invoke(cli, ["grade", "--gold", "E", "--options", "4", "E"])
    assert result.exit_code == 2 and "gold answer 'E' is not one of the options A-D" in result.output
