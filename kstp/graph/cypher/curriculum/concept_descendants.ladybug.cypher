// name: concept_descendants
// params: $conceptId: string
// returns: many {conceptId, code}
// Ladybug: SHORTEST visits each reachable concept once instead of enumerating every path.
MATCH (c:Concept {id: $conceptId})-[:PREREQUISITE_OF* SHORTEST 1..]->(d:Concept)
RETURN DISTINCT d.id AS conceptId, d.code AS code
ORDER BY conceptId
