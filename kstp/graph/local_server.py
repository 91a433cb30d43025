"""The local Neo4j 5 server that kstp manages: its files, stopping and starting it, neo4j-admin.

A server *home* (``.kstp/neo4j`` for ``make neo4j``, any folder for
``tools/neo4j_server.py --home``) holds ``conf/neo4j.conf``, ``data/``, ``logs/`` and
``run/neo4j.pid``; the jars it runs on sit in ``lib/`` beside the ``plugins/`` folder its
configuration names (``tools/neo4j_server.py`` resolves them from Maven Central and writes
the configuration). The server runs from the jars with Neo4j's own entry point
(``org.neo4j.server.CommunityEntryPoint``), and ``neo4j-admin`` is its ``AdminTool`` on
the same class path, so no Neo4j distribution needs to be installed.

Assumes one server per home, started by this module (the pid file is its own), with
Bolt on the loopback interface.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from kstp.errors import ConfigError

__all__ = ["JVM_OPTIONS", "START_TIMEOUT_S", "STOP_TIMEOUT_S", "LocalServer", "java", "DEFAULT_HOME"]

#: The home of ``make neo4j``'s server, relative to the folder kstp runs in.
DEFAULT_HOME = Path(".kstp") / "neo4j"

#: The JVM options of Neo4j's own launcher (neo4j.conf ``server.jvm.additional``), less
#: AlwaysPreTouch, which would commit the whole heap at once on a shared machine, and with the
#: throughput collector (ParallelGC) for G1: a local server ingests and answers one client's batches,
#: where pauses cost less than G1's barriers on every write. On the 2-core machine the server's CPU time
#: for the demo and its reset was 61-69 s against 72-78 s with G1 (two runs each, alternated), and 10-15 %
#: less over the Neo4j half of the parity, page and structure tests.
JVM_OPTIONS = [
    "-XX:+UseParallelGC", "-XX:-OmitStackTraceInFastThrow", "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields", "-XX:+DisableExplicitGC", "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true", "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true", "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints", "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true", "-Djdk.attach.allowAttachSelf=true",
]

#: Seconds to wait for Bolt after a start, and for the process to end after SIGTERM.
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 120


def java() -> str:
    """The ``java`` to run Neo4j 5 with: ``$JAVA_HOME/bin/java``, else the one on PATH (17 or 21).

    Raises
    ------
    ConfigError
        When there is none.
    """
    home = os.environ.get("JAVA_HOME")
    exe = Path(home, "bin", "java") if home else shutil.which("java")
    if not exe or not Path(exe).exists():
        raise ConfigError("no java found; Neo4j 5 needs Java 17 or 21 (install one, or set JAVA_HOME)")
    return str(exe)


@dataclass(frozen=True)
class LocalServer:
    """The server whose home is ``home`` (absolute).

    Raises
    ------
    ConfigError
        From :meth:`at`, when ``home`` holds no server configuration.
    """

    home: Path

    @classmethod
    def at(cls, home: str | os.PathLike) -> LocalServer:
        """The server of ``home``, checked to have a configuration (``make neo4j`` writes one)."""
        server = cls(Path(home).resolve())
        if not (server.home / "conf" / "neo4j.conf").is_file():
            raise ConfigError(f"no Neo4j server that kstp manages in {server.home} (no conf/neo4j.conf): start one "
                              "with make neo4j, or name its folder with --home")
        return server

    @property
    def conf(self) -> dict[str, str]:
        """The settings of ``conf/neo4j.conf``."""
        out = {}
        for line in (self.home / "conf" / "neo4j.conf").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                out[key] = value
        return out

    @property
    def bolt(self) -> tuple[str, int]:
        """Host and port Bolt listens on."""
        host, port = self.conf["server.bolt.listen_address"].rsplit(":", 1)
        return host, int(port)

    @property
    def jars(self) -> Path:
        """The folder holding ``lib/`` and ``plugins/``."""
        return Path(self.conf["server.directories.plugins"]).parent

    @property
    def classpath(self) -> str:
        # As Neo4j's own launcher does: the plugins' extensions are found on the classpath.
        return f"{self.jars / 'lib'}/*:{self.jars / 'plugins'}/*"

    @property
    def env(self) -> dict[str, str]:
        """The environment of the server's processes (``NEO4J_HOME``, ``NEO4J_CONF``)."""
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.home / "conf")}

    def serves(self, uri: str) -> bool:
        """Whether ``uri`` (``neo4j://`` or ``bolt://``) reaches this server's Bolt port on this machine."""
        parts = urlsplit(uri)
        local = (parts.hostname or "") in ("127.0.0.1", "localhost", self.bolt[0])
        return local and (parts.port or 7687) == self.bolt[1]

    def pid(self) -> int | None:
        """The running server's process id (``None``: not running)."""
        path = self.home / "run" / "neo4j.pid"
        try:
            pid = int(path.read_text().strip() or 0)
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    def start(self, ready: Callable[[], bool], timeout: float = START_TIMEOUT_S) -> float:
        """Start the server in the background and wait until ``ready()``; the seconds taken.

        Raises
        ------
        ConfigError
            When the process exits while starting, or is not ready within ``timeout``.
        """
        began = time.monotonic()
        heap = self.conf["server.memory.heap.max_size"]
        logs = self.home / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = open(logs / "console.log", "ab")  # noqa: SIM115 - handed to the server process
        command = [java(), f"-Xms{heap}", f"-Xmx{heap}", *JVM_OPTIONS, "-cp", self.classpath,
                   "org.neo4j.server.CommunityEntryPoint", f"--home-dir={self.home}",
                   f"--config-dir={self.home / 'conf'}"]
        process = subprocess.Popen(command, cwd=self.home, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        (self.home / "run").mkdir(parents=True, exist_ok=True)
        (self.home / "run" / "neo4j.pid").write_text(str(process.pid))
        while not ready():
            if process.poll() is not None:
                tail = (logs / "console.log").read_text(errors="replace")[-3000:]
                raise ConfigError(f"the Neo4j server in {self.home} exited with {process.returncode} while starting; "
                                  f"{logs / 'console.log'} ends with:\n{tail}")
            if time.monotonic() - began > timeout:
                raise ConfigError(f"the Neo4j server in {self.home} did not answer within {timeout:.0f} s; see {logs}")
            time.sleep(0.5)
        return time.monotonic() - began

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """Stop the server cleanly (SIGTERM, then wait for it to checkpoint and exit); its pid, or ``None``.

        Raises
        ------
        ConfigError
            When it is still running after ``timeout`` seconds.
        """
        pid = self.pid()
        if pid is None:
            return None
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            raise ConfigError(f"the Neo4j server in {self.home} (pid {pid}) did not stop within {timeout:.0f} s")
        (self.home / "run" / "neo4j.pid").unlink(missing_ok=True)
        return pid

    def admin(self, args: list[str], heap: str = "1g") -> subprocess.CompletedProcess:
        """Run ``neo4j-admin ARGS`` (Neo4j's ``AdminTool`` on the server's jars and configuration).

        Its output is returned, not printed (``capture_output``).
        """
        # The server's jars alone: the plugins (GDS, APOC) add seconds of start-up and nothing the tool uses.
        command = [java(), f"-Xmx{heap}", "-cp", f"{self.jars / 'lib'}/*", "org.neo4j.cli.AdminTool", *args]
        return subprocess.run(command, cwd=self.home, env=self.env, capture_output=True, text=True)
