// name: concept_ancestors
// params: $conceptId: string
// returns: many {conceptId, code}
// Ladybug: SHORTEST visits each reachable concept once instead of enumerating every
// path (about 5x faster on the Coherence Map, whose longest chain has 30 edges).
MATCH (a:Concept)-[:PREREQUISITE_OF* SHORTEST 1..]->(c:Concept {id: $conceptId})
RETURN DISTINCT a.id AS conceptId, a.code AS code
ORDER BY conceptId
