// name: concept_closure
// params: $framework: string
// returns: many {fromId, toId}
// Ladybug: SHORTEST visits each reachable concept once instead of enumerating every path.
MATCH (a:Concept {framework: $framework})-[:PREREQUISITE_OF* SHORTEST 1..]->(b:Concept {framework: $framework})
RETURN DISTINCT a.id AS fromId, b.id AS toId
ORDER BY fromId, toId
