// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind}
// Learners who answered a question of the dataset, with their kind (human, model, group).
MATCH (l:Learner)
WHERE EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
RETURN l.id AS learnerId, l.kind AS kind
ORDER BY learnerId
