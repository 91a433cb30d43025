// name: gds_drop_projection
// params: $graph: string
// returns: many {name}
// engine: neo4j
// Drops the GDS projection $graph; nothing when it is already gone.
CALL gds.graph.drop($graph, false) YIELD graphName
RETURN graphName AS name
