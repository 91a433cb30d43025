"""Helpers of the tests that run real Neo4j servers of their own and ``kstp`` in a subprocess.

A throw-away server (:class:`Server`, the ``own_server`` fixture) runs from
``tools/neo4j_server.py --home`` in a tmp folder on the project's jars, so the shared test
server and its users are not disturbed. Import the fixture into a test module to use it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from kstp.settings import GraphTarget

ROOT = Path(__file__).resolve().parents[2]
KSTP = [sys.executable, "-c", "from kstp.cli.main import cli; cli(prog_name='kstp')"]


# ---- a throw-away server -----------------------------------------------------------------
class Server:
    """A Neo4j server of the test's own in ``home`` (``tools/neo4j_server.py --home``)."""

    def __init__(self, home: Path):
        self.home = home

    def tool(self, command: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "KSTP_NEO4J_HEAP": "512m", "KSTP_NEO4J_PAGECACHE": "128m"}
        return subprocess.run([sys.executable, str(ROOT / "tools" / "neo4j_server.py"), "--home", str(self.home),
                               command], env=env, capture_output=True, text=True, timeout=300)

    def start(self) -> None:
        done = self.tool("start")
        assert done.returncode == 0, f"the throw-away Neo4j server did not start: {done.stdout}{done.stderr}"

    @property
    def env(self) -> dict[str, str]:
        pairs = (line.split("=", 1) for line in (self.home / "neo4j.env").read_text().splitlines() if "=" in line)
        return dict(pairs)

    @property
    def target(self) -> GraphTarget:
        env = self.env
        return GraphTarget("neo4j", env["KSTP_GRAPH"], env["NEO4J_USER"], env["NEO4J_PASSWORD"])

    def kill(self) -> None:
        """SIGKILL the JVM (no shutdown, no checkpoint) and wait until it is gone."""
        pid = int((self.home / "run" / "neo4j.pid").read_text())
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        raise AssertionError(f"Neo4j pid {pid} still alive 30 s after SIGKILL")

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace") for p in (self.home / "logs").glob("*.log"))


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a fresh interpreter: this worktree first on the path, one OpenMP thread, ``env``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "OMP_NUM_THREADS": "1", **(env or {})}


def kstp(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the kstp CLI in a fresh interpreter (this worktree first on the path)."""
    return subprocess.run([*KSTP, *args], env=child_env(env), capture_output=True, text=True, timeout=timeout)


def start_kstp(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([*KSTP, *args], env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def credentials(target: GraphTarget, password: str | None = None) -> dict[str, str]:
    return {"NEO4J_USER": target.user, "NEO4J_PASSWORD": target.password if password is None else password}


def one_error_line(stderr: str) -> str:
    """The error on stderr, which must be one line; the progress lines printed before it when stderr is not
    a terminal (``<step>: done in S s``, ``<write>: done/total rows written, R rows/s, S s``) are not part of it."""
    progress = re.compile(r": done in \d+\.\d s$|: [\d,]+/[\d,]+ rows written, \d+ rows/s, \d+\.\d s$")
    lines = [line for line in stderr.splitlines() if line.strip() and not progress.search(line)]
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{stderr}"
    assert lines[0].startswith("Error: "), lines[0]
    return lines[0]
