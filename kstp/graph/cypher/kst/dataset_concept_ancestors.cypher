// name: dataset_concept_ancestors
// params: $dataset: string
// returns: many {fromId, toId}
// The transitive prerequisites of the concepts $dataset's questions assess: every pair
// (a, c) with a path a -> ... -> c of length >= 1, c assessed (a need not be). Table 1's
// "prerequisites per question" counts them per question (paper 1, §4).
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(c:Concept)
WITH DISTINCT c
MATCH (a:Concept)-[:PREREQUISITE_OF*1..]->(c)
RETURN DISTINCT a.id AS fromId, c.id AS toId
