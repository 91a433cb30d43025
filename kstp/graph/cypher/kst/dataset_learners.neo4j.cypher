// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind, learnerKey}
// Learners who answered a question of the dataset, with their kind (human, model, group).
// Neo4j form: the learner key is the integer node id, as the Neo4j form of
// `answer_keys_in_range` returns it.
MATCH (l:Learner)
WHERE EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
RETURN l.id AS learnerId, l.kind AS kind, id(l) AS learnerKey
ORDER BY learnerId
