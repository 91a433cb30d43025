// name: concept_cycles
// params: $framework: string
// returns: many {conceptId}
// Ladybug: variable-length matches enumerate walks, which never end on a cycle (the
// portable form exhausts the buffer pool). A concept is on a cycle iff it has a
// self-loop, or an edge to a concept from which a SHORTEST path leads back to it.
MATCH (a:Concept {framework: $framework})-[:PREREQUISITE_OF]->(a)
RETURN a.id AS conceptId
UNION
MATCH (a:Concept {framework: $framework})-[:PREREQUISITE_OF]->(:Concept)-[:PREREQUISITE_OF* SHORTEST 1..]->(a)
RETURN a.id AS conceptId
