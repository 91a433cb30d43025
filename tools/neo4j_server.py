"""A local Neo4j 5 Community server for kstp, without Docker (``make neo4j``, ``make neo4j-stop``).

The jars come from Maven Central through ``neo4j/pom.xml`` (Neo4j, APOC core, GDS) and are
cached in ``.kstp/neo4j/lib`` and ``.kstp/neo4j/plugins``; the server runs from them with
its own entry point (``org.neo4j.server.CommunityEntryPoint``) and a ``neo4j.conf`` written
here: Bolt and HTTP on 127.0.0.1 only, on ports free at install time; authentication on,
with a password generated per install and set before the first start (it never appears on
a command line, in a log or on the terminal); data, logs and the pid under ``.kstp/neo4j/``;
``gds.*`` and ``apoc.*`` allowed; a modest heap and page cache.

``start`` writes ``.kstp/neo4j.env`` (mode 600) with ``KSTP_GRAPH``, ``NEO4J_USER`` and
``NEO4J_PASSWORD``, so ``set -a; . .kstp/neo4j.env; set +a`` points a shell at the server.

    python tools/neo4j_server.py start     # install if needed, start, wait for Bolt
    python tools/neo4j_server.py stop      # clean shutdown (SIGTERM, wait)
    python tools/neo4j_server.py status
    python tools/neo4j_server.py --home /tmp/x start   # a throw-away server of its own

``--home DIR`` runs a second, independent server in ``DIR`` (its own ports, password, data,
logs and ``DIR/neo4j.env``) on the jars of the project's install; tests that kill a server
use one so the shared one is left alone.

Memory is sized from the machine's at every start (:func:`memory_sizes`, printed by
``start``): the heap a twelfth of it (2-8 GB; the pure-Cypher Eq. 1 over
the annotation map needs 2), the page cache an eighth (0.5-16 GB), so
that a graph of XES3G5M's size (5.4 M answers) stays in the page cache; set
``KSTP_NEO4J_HEAP`` / ``KSTP_NEO4J_PAGECACHE`` (``2g``, ``1536m``) to choose them. Old
transaction logs are pruned past 1 GB.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's kstp first on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kstp.errors import ConfigError  # noqa: E402
from kstp.graph import local_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
JARS = ROOT / ".kstp" / "neo4j"  # lib/ and plugins/, shared by every home
HOME = JARS  # the server's conf, data, logs and run folders (``--home``)
ENV_FILE = ROOT / ".kstp" / "neo4j.env"
POM = ROOT / "neo4j" / "pom.xml"
USER = "neo4j"
START_TIMEOUT_S = local_server.START_TIMEOUT_S

# Sets the initial password from stdin, so it never appears in a process list. "--" ends the options:
# a generated password starts with "-" one time in 64, and picocli would take it for an option.
SET_PASSWORD_JAVA = """
public class SetInitialPassword {
    public static void main(String[] args) throws Exception {
        String password = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
        org.neo4j.cli.AdminTool.main(new String[] {"dbms", "set-initial-password", "--", password});
    }
}
"""


def java() -> str:
    """The ``java`` to run Neo4j 5 with (:func:`kstp.graph.local_server.java`); exits when there is none."""
    try:
        return local_server.java()
    except ConfigError as exc:
        sys.exit(f"neo4j: {exc}")


def server() -> local_server.LocalServer:
    """The server of the current home."""
    return local_server.LocalServer(HOME)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _jar_key(name: str) -> str:
    """``org.group.foo-bar-1.2.3.jar`` -> ``org.group.foo-bar`` (group and artifact, no version).

    The group matters: GDS's ``annotations`` is not JetBrains' ``annotations``.
    """
    stem = name.removesuffix(".jar")
    parts = stem.split("-")
    while len(parts) > 1 and parts[-1][:1].isdigit():
        parts.pop()
    return "-".join(parts)


def install() -> None:
    """Resolve the jars from Maven Central into ``.kstp/neo4j`` once (skipped when present)."""
    lib, plugins = JARS / "lib", JARS / "plugins"
    for profile, folder in (("server", lib), ("plugins", plugins)):
        done_with = folder / ".complete"  # holds the pom.xml it was resolved from
        if done_with.exists() and done_with.read_text() == POM.read_text():
            continue
        shutil.rmtree(folder, ignore_errors=True)
        print(f"neo4j: resolving the {profile} jars from Maven Central (once) ...", flush=True)
        done = subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(POM), "-P", profile,
                               "dependency:copy-dependencies", f"-DoutputDirectory={folder}", "-DincludeScope=runtime",
                               "-Dmdep.prependGroupId=true"],
                              capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"neo4j: mvn could not resolve the {profile} jars of {POM} (exit {done.returncode}):\n"
                     f"{(done.stdout + done.stderr)[-3000:]}")
        if profile == "plugins":  # the server's own jars win; a second copy would clash
            server = {_jar_key(p.name) for p in lib.glob("*.jar")}
            for jar in plugins.glob("*.jar"):
                if _jar_key(jar.name) in server:
                    jar.unlink()
        (folder / ".complete").write_text(POM.read_text())  # a changed pom.xml resolves again
    if not (HOME / "conf" / "neo4j.conf").exists():
        _write_conf()
    if not (HOME / "data" / "dbms" / "auth.ini").exists():
        _set_password()


def memory_sizes(total: int | None = None) -> tuple[str, str]:
    """Heap and page cache for a machine with ``total`` bytes of memory (default: this one's).

    The environment's ``KSTP_NEO4J_HEAP`` and ``KSTP_NEO4J_PAGECACHE`` win.

    >>> memory_sizes(24 * 2**30)
    ('2048m', '3072m')
    >>> memory_sizes(4 * 2**30)
    ('2048m', '512m')
    """
    total = total or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    mb = total // 2**20

    def clamp(value: int, low: int, high: int) -> str:
        return f"{max(low, min(high, value // 256 * 256))}m"

    return (os.environ.get("KSTP_NEO4J_HEAP") or clamp(mb // 12, 2048, 8192),
            os.environ.get("KSTP_NEO4J_PAGECACHE") or clamp(mb // 8, 512, 16384))


def _write_conf() -> None:
    """Write ``neo4j.conf``: the ports of the existing one (new free ones at install), memory as sized now."""
    conf = HOME / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    if (conf / "neo4j.conf").exists():
        old = _conf()
        bolt, http = (int(old[f"server.{k}.listen_address"].rsplit(":", 1)[1]) for k in ("bolt", "http"))
    else:
        bolt, http = _free_port(), _free_port()
    heap, pagecache = memory_sizes()
    lines = [
        "# Written by tools/neo4j_server.py at each start; ports were free at install time.",
        f"server.directories.data={HOME / 'data'}",
        f"server.directories.logs={HOME / 'logs'}",
        f"server.directories.plugins={JARS / 'plugins'}",
        f"server.directories.run={HOME / 'run'}",
        f"server.directories.import={HOME / 'import'}",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        "server.bolt.enabled=true",
        f"server.bolt.listen_address=127.0.0.1:{bolt}",
        "server.bolt.tls_level=DISABLED",
        "server.http.enabled=true",
        f"server.http.listen_address=127.0.0.1:{http}",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.security.procedures.unrestricted=gds.*,apoc.*",
        "dbms.security.procedures.allowlist=gds.*,apoc.*,db.*,dbms.*",
        f"server.memory.heap.initial_size={heap}",
        f"server.memory.heap.max_size={heap}",
        f"server.memory.pagecache.size={pagecache}",
        # Transactions may take 70 % of the heap (Neo4j's default): the pure-Cypher Eq. 1 over the
        # 4,118-question annotation map holds about 1.2 M pairs in one transaction.
        "db.memory.transaction.total.max=" + _share(heap, 0.7),
        "dbms.usage_report.enabled=false",
        # A local server keeps no point-in-time history: transaction logs past 1 GB go at a checkpoint
        # (a 5.4 M-answer ingest writes some 3 GB of them).
        "db.tx_log.rotation.retention_policy=1G size",
        # A stop waited twice 5 s (Neo4j's defaults) for Bolt's threads and connections after the
        # databases had stopped, with nothing left for them to do: a stop took 11.7 s, now 3.5 s.
        "internal.server.bolt.thread_pool_shutdown_wait_time=1s",
        "internal.server.bolt.connection_shutdown_wait_time=1s",
    ]
    (conf / "neo4j.conf").write_text("\n".join(lines) + "\n")


def _share(size: str, fraction: float) -> str:
    """``fraction`` of a JVM size such as ``2g`` or ``1536m``, in megabytes: ``_share("2g", .5)`` is ``1024m``."""
    units = {"k": 1 / 1024, "m": 1, "g": 1024}
    return f"{int(float(size[:-1]) * units[size[-1].lower()] * fraction)}m"


def _conf() -> dict[str, str]:
    out = {}
    for line in (HOME / "conf" / "neo4j.conf").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out[key] = value
    return out


def _classpath() -> str:
    # As Neo4j's own launcher does: the plugins' extensions are found on the classpath.
    return f"{JARS / 'lib'}/*:{JARS / 'plugins'}/*"


def _env() -> dict[str, str]:
    return {**os.environ, "NEO4J_HOME": str(HOME), "NEO4J_CONF": str(HOME / "conf")}


def _set_password() -> None:
    """Generate the install's password, set it as the initial one, keep it in ``.kstp/neo4j.env``."""
    password = secrets.token_urlsafe(24)
    source = HOME / "run" / "SetInitialPassword.java"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(SET_PASSWORD_JAVA)
    done = subprocess.run([java(), "-cp", _classpath(), str(source)], input=password + "\n", text=True,
                          env=_env(), cwd=HOME, capture_output=True)
    if done.returncode or not (HOME / "data" / "dbms" / "auth.ini").exists():
        sys.exit(f"neo4j: setting the initial password failed:\n{done.stderr.replace(password, '***')[-2000:]}")
    _write_env(password)


def _write_env(password: str) -> None:
    bolt = _conf()["server.bolt.listen_address"]
    ENV_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(ENV_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"KSTP_GRAPH=neo4j://{bolt}\nNEO4J_USER={USER}\nNEO4J_PASSWORD={password}\n")
    os.chmod(ENV_FILE, 0o600)


def read_env() -> dict[str, str]:
    """``KSTP_GRAPH``, ``NEO4J_USER`` and ``NEO4J_PASSWORD`` of the local server (``.kstp/neo4j.env``)."""
    pairs = (line.split("=", 1) for line in ENV_FILE.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def _pid() -> int | None:
    return server().pid()


def _answers(timeout: float = 2.0) -> bool:
    """Whether the server answers a Bolt login with this install's credentials."""
    import neo4j

    env = read_env()
    uri = env["KSTP_GRAPH"].replace("neo4j://", "bolt://", 1)  # no routing-table warnings while it starts
    try:
        with neo4j.GraphDatabase.driver(uri, auth=(env["NEO4J_USER"], env["NEO4J_PASSWORD"]),
                                        connection_timeout=timeout) as driver:
            driver.verify_connectivity()
        return True
    except Exception:  # noqa: BLE001 - any failure means "not (yet) answering"
        return False


def start() -> float:
    """Start the server in the background (or find it running); wait for Bolt; seconds taken."""
    if ENV_FILE.exists() and _pid() and _answers():  # never re-resolve jars under a running server
        print(f"neo4j: already running at {read_env()['KSTP_GRAPH']} (pid {_pid()})")
        return 0.0
    install()
    _write_conf()
    conf = _conf()
    try:
        took = server().start(_answers, START_TIMEOUT_S)
    except ConfigError as exc:
        sys.exit(f"neo4j: {exc}")
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"neo4j: started at {read_env()['KSTP_GRAPH']} (pid {_pid()}) in {took:.1f} s; "
          f"credentials in {ENV_FILE.relative_to(ROOT) if ENV_FILE.is_relative_to(ROOT) else ENV_FILE}; "
          f"heap {conf['server.memory.heap.max_size']}, page cache {conf['server.memory.pagecache.size']} "
          f"(sized from {total:.1f} GiB of memory; KSTP_NEO4J_HEAP / KSTP_NEO4J_PAGECACHE choose them)")
    return took


def stop() -> None:
    """Stop the server cleanly: SIGTERM, then wait for it to checkpoint and exit."""
    try:
        pid = server().stop()
    except ConfigError as exc:
        sys.exit(f"neo4j: {exc}")
    print(f"neo4j: stopped (pid {pid})" if pid else "neo4j: not running")


def use_home(home: Path) -> None:
    """Point this process at the server in ``home`` (made if absent) and its ``home/neo4j.env``."""
    global HOME, ENV_FILE
    HOME = Path(home).resolve()
    ENV_FILE = HOME / "neo4j.env"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["install", "start", "stop", "status"])
    parser.add_argument("--home", type=Path, help="a server of its own in this folder (default .kstp/neo4j)")
    args = parser.parse_args()
    if args.home:
        use_home(args.home)
    command = args.command
    if command == "install":
        install()
    elif command == "start":
        start()
    elif command == "stop":
        stop()
    else:
        running = _pid() is not None and ENV_FILE.exists() and _answers()
        print(f"neo4j: {'running at ' + read_env()['KSTP_GRAPH'] if running else 'not running'}")
        sys.exit(0 if running else 1)


if __name__ == "__main__":
    main()
