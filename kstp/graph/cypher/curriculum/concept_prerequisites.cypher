// name: concept_prerequisites
// params: $framework: string
// returns: many {fromId, toId, source}
// The direct (stored) prerequisite edges among the concepts of one framework; from is
// the prerequisite of to.
MATCH (a:Concept {framework: $framework})-[r:PREREQUISITE_OF]->(b:Concept {framework: $framework})
RETURN a.id AS fromId, b.id AS toId, r.source AS source
ORDER BY fromId, toId
