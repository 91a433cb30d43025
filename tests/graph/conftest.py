"""The ``own_server`` fixture: a throw-away Neo4j server for the graph tests that stop, kill or fill one."""

from __future__ import annotations

import pytest

from tests.conftest import connect_neo4j as connect
from tests.graph.servers import Server


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A throw-away Neo4j server with the kstp schema, stopped afterwards."""
    server = Server(tmp_path_factory.mktemp("neo4j-home"))
    server.start()
    with connect(server.target) as graph:
        graph.ensure_schema()
    yield server
    server.tool("stop")
