// name: gds_project_concept_prerequisites
// params: $framework: string, $graph: string
// returns: one {name}
// engine: neo4j
// Projects a framework's concepts and their prerequisite edges (concepts without any
// stay in as isolated nodes) as the GDS graph $graph, for the topological sort.
MATCH (c:Concept {framework: $framework})
OPTIONAL MATCH (c)-[:PREREQUISITE_OF]->(d:Concept {framework: $framework})
WITH gds.graph.project($graph, c, d) AS g
RETURN g.graphName AS name
