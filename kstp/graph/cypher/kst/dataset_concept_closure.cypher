// name: dataset_concept_closure
// params: $dataset: string
// returns: many {fromId, toId}
// The transitive prerequisite closure restricted to what Eq. 1 needs: every pair
// (a, b) with a path a -> ... -> b of length >= 1, a assessed by a question of $dataset.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(a:Concept)
WITH DISTINCT a
MATCH (a)-[:PREREQUISITE_OF*1..]->(b:Concept)
RETURN DISTINCT a.id AS fromId, b.id AS toId
