"""Run Neo4j 5's linter over every .cypher file of kstp (used by `make lint`).

Labels and relationship types come from kstp's graph model, so a misspelling fails.
Files written for LadybugDB alone (``*.ladybug.cypher`` overrides and the Ladybug DDL)
are not Neo4j Cypher and are skipped here; the test suite runs them on Ladybug.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kstp.platform.schema import node_labels, rel_types

ROOT = Path(__file__).resolve().parent.parent
LINTER = ROOT / "tools" / "cypher-lint"


def main() -> int:
    files = sorted(p for p in (ROOT / "kstp" / "cypher").rglob("*.cypher")
                   if not p.name.endswith("ladybug.cypher"))
    if not (LINTER / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=LINTER, check=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as model:
        json.dump({"labels": list(node_labels()), "relationshipTypes": list(rel_types())}, model)
        model.flush()
        done = subprocess.run(["node", "--no-warnings", str(LINTER / "lint.mjs"), "--schema", model.name,
                               *map(str, files)], cwd=ROOT)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
