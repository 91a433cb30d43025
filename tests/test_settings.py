"""Graph location and data folder settings."""

from __future__ import annotations

import pytest

from kstp.errors import ConfigError, DataNotFoundError
from kstp.settings import data_dir, graph_target


def test_default_graph_is_embedded_ladybug(monkeypatch):
    monkeypatch.delenv("KSTP_GRAPH", raising=False)
    target = graph_target()
    assert (target.engine, target.location) == ("ladybug", ".kstp/graph")


def test_neo4j_uri_needs_credentials_and_hides_password(monkeypatch):
    monkeypatch.delenv("NEO4J_USER", raising=False)
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    with pytest.raises(ConfigError, match="needs NEO4J_USER and NEO4J_PASSWORD"):
        graph_target("neo4j://db:7687")
    monkeypatch.setenv("NEO4J_USER", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", "s3cret-value")
    target = graph_target("bolt+s://db:7687")
    assert (target.engine, target.user, target.password) == ("neo4j", "neo4j", "s3cret-value")
    assert "s3cret" not in repr(target) and "s3cret" not in target.describe()


@pytest.mark.parametrize("value", ["sqlite:/tmp/x", "http://db:7474", "ladybug:"])
def test_bad_graph_location_is_explained(value):
    with pytest.raises(ConfigError, match="KSTP_GRAPH or --graph|KSTP_GRAPH"):
        graph_target(value)


def test_missing_data_folder_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv("KSTP_DATA", raising=False)
    with pytest.raises(DataNotFoundError, match="set KSTP_DATA"):
        data_dir(tmp_path / "absent")


def test_unknown_scheme_with_credentials_is_masked():
    with pytest.raises(ConfigError) as info:
        graph_target("http://neo4j:hunter22@db:7474")
    assert "hunter22" not in str(info.value) and "db:7474" in str(info.value)
