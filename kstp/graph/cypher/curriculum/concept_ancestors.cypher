// name: concept_ancestors
// params: $conceptId: string
// returns: many {conceptId, code}
// Every concept from which $conceptId can be reached along PREREQUISITE_OF: its direct
// and transitive prerequisites (the prerequisite closure, upwards).
MATCH (a:Concept)-[:PREREQUISITE_OF*1..]->(c:Concept {id: $conceptId})
RETURN DISTINCT a.id AS conceptId, a.code AS code
ORDER BY conceptId
