// name: concept_descendants
// params: $conceptId: string
// returns: many {conceptId, code}
// Every concept that $conceptId is a direct or transitive prerequisite of (the
// prerequisite closure, downwards).
MATCH (c:Concept {id: $conceptId})-[:PREREQUISITE_OF*1..]->(d:Concept)
RETURN DISTINCT d.id AS conceptId, d.code AS code
ORDER BY conceptId
