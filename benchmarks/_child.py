"""Entry point of an isolated benchmark step: ``python -m benchmarks._child MODULE:FUNC JSON_KWARGS OUT``.

Runs the function in this fresh interpreter and writes its dict result, plus the process's
peak RSS (``peak_rss``, bytes), to the JSON file OUT.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from benchmarks.common import process_peak_rss


def main(argv: list[str]) -> None:
    target, kwargs, out = argv
    module, func = target.split(":")
    result = getattr(importlib.import_module(module), func)(**json.loads(kwargs))
    result["peak_rss"] = process_peak_rss()
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
