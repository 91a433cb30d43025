// name: question_prerequisite_edges
// params: $dataset: string
// returns: many {fromId, toId, rule}
// The stored (derived) question prerequisite relation of a dataset: the surmise
// relation without its reflexive pairs.
MATCH (qi:Question)-[r:PREREQUISITE_OF]->(qj:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN qi.id AS fromId, qj.id AS toId, r.rule AS rule
