"""The graph: the store protocol and its two engines (LadybugDB, Neo4j), the factory that
opens one, the schema, the query registry with its ``cypher/`` files, GDS, vector search,
and the typed facade of KST structures on the graph (:mod:`kstp.graph.structures`)."""
