"""Run Neo4j 5's linter over every .cypher file of kstp (used by `make lint`).

Labels and relationship types come from kstp's graph model (with the label under which
Neo4j keeps an unfinished ingest's learners, ``kstp.graph.neo4j.STAGED``), so a misspelling fails.
Files written for LadybugDB alone (``*.ladybug.cypher`` overrides and the Ladybug DDL)
are not Neo4j Cypher and are skipped here; the test suite runs them on Ladybug. The
search phrases of the Neo4j Bloom perspectives in ``bloom/`` are Neo4j Cypher too and
are linted the same way, each written to a temporary file named after its perspective.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kstp.graph.neo4j import STAGED
from kstp.graph.schema import node_labels, rel_types

ROOT = Path(__file__).resolve().parent.parent
LINTER = ROOT / "tools" / "cypher-lint"


def bloom_phrase_files(folder: Path, perspectives: list[Path] | None = None) -> list[Path]:
    """Write the Cypher of each Bloom search phrase to ``folder``; return the files.

    A file is ``<perspective stem>.phrase<N>.cypher`` and opens with a comment naming
    the phrase, so a lint message points back to it.
    """
    files = []
    for path in perspectives if perspectives is not None else sorted((ROOT / "bloom").glob("*.json")):
        for n, template in enumerate(json.loads(path.read_text())["templates"], 1):
            target = folder / f"{path.stem}.phrase{n}.cypher"
            target.write_text(f"// {path.name}: search phrase {template['text']!r}\n{template['cypher']}\n")
            files.append(target)
    return files


def lint(files: list[Path]) -> int:
    """Lint ``files`` with Neo4j's linter and kstp's labels and types; the exit status (0: clean)."""
    if not (LINTER / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=LINTER, check=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as model:
        json.dump({"labels": [*node_labels(), *STAGED.values()], "relationshipTypes": list(rel_types())}, model)
        model.flush()
        done = subprocess.run(["node", "--no-warnings", str(LINTER / "lint.mjs"), "--schema", model.name,
                               *map(str, files)], cwd=ROOT)
    return done.returncode


def main() -> int:
    files = sorted(p for p in (ROOT / "kstp" / "graph" / "cypher").rglob("*.cypher")
                   if not p.name.endswith("ladybug.cypher"))
    with tempfile.TemporaryDirectory() as folder:
        return lint(files + bloom_phrase_files(Path(folder)))


if __name__ == "__main__":
    sys.exit(main())
