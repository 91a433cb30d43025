// name: dataset_concept_ancestors
// params: $dataset: string
// returns: many {fromId, toId}
// Ladybug: SHORTEST visits each concept that reaches c once instead of enumerating every path.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(c:Concept)
WITH DISTINCT c
MATCH (a:Concept)-[:PREREQUISITE_OF* SHORTEST 1..]->(c)
RETURN DISTINCT a.id AS fromId, c.id AS toId
