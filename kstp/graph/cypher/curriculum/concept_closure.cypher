// name: concept_closure
// params: $framework: string
// returns: many {fromId, toId}
// The transitive closure of PREREQUISITE_OF among the concepts of one framework: a row
// for every pair (a, b) with a path a -> ... -> b of length >= 1.
MATCH (a:Concept {framework: $framework})-[:PREREQUISITE_OF*1..]->(b:Concept {framework: $framework})
RETURN DISTINCT a.id AS fromId, b.id AS toId
ORDER BY fromId, toId
