// name: question_prerequisite_keys
// params: $dataset: string
// returns: many {fromKey, toKey}
// `question_prerequisite_edges` with both questions as the node keys of `question_keys`
// (the ids here, the node offsets in the Ladybug form), for PSR's bulk read.
MATCH (qi:Question)-[:PREREQUISITE_OF]->(qj:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN qi.id AS fromKey, qj.id AS toKey
