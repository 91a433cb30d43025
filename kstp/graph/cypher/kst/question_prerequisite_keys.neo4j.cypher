// name: question_prerequisite_keys
// params: $dataset: string
// returns: many {fromKey, toKey}
// Neo4j form: both questions as integer node ids (the keys of `question_keys`); 1.2 M
// pairs at XES3G5M scale come as two lists of integers.
MATCH (qi:Question)-[:PREREQUISITE_OF]->(qj:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN id(qi) AS fromKey, id(qj) AS toKey
