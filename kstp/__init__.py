"""kstp: Knowledge Space Theory on a property graph.

Curricula, questions, learners and their answers live in one graph (LadybugDB embedded
by default, Neo4j 5 in production); Cypher computes the KST structures and evaluators
write their outcomes back onto the graph. See DESIGN.md for the map.
"""

from kstp._version import __version__

__all__ = ["__version__"]
