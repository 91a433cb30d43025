// name: concept_cycles
// params: $framework: string
// returns: many {conceptId}
// Concepts that lie on a PREREQUISITE_OF cycle (including self-loops). Ingest refuses
// cycles, so this is empty unless the graph was edited by other means.
MATCH (a:Concept {framework: $framework})-[:PREREQUISITE_OF*1..]->(a)
RETURN DISTINCT a.id AS conceptId
ORDER BY conceptId
