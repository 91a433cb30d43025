// name: dataset_concept_closure
// params: $dataset: string
// returns: many {fromId, toId}
// Ladybug: SHORTEST visits each reachable concept once instead of enumerating every path.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(a:Concept)
WITH DISTINCT a
MATCH (a)-[:PREREQUISITE_OF* SHORTEST 1..]->(b:Concept)
RETURN DISTINCT a.id AS fromId, b.id AS toId
