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
