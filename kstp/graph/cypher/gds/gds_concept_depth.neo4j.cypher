// name: gds_concept_depth
// params: $graph: string
// returns: many {conceptId, depth}
// engine: neo4j
// Depth of every concept of the projection $graph: the edges of the longest prerequisite
// chain ending at it (GDS topological sort with computeMaxDistanceFromSource). Concepts
// on or after a cycle are left out by GDS; the caller names them.
CALL gds.dag.topologicalSort.stream($graph, {computeMaxDistanceFromSource: true})
YIELD nodeId, maxDistanceFromSource
RETURN gds.util.asNode(nodeId).id AS conceptId, toInteger(maxDistanceFromSource) AS depth
