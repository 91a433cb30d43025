// name: learner_accuracy
// params: $dataset: string
// returns: many {learnerId, answered, correct, accuracy}
// Per-learner accuracy over the questions of a dataset it answered.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WITH l, count(a) AS answered, sum(CASE WHEN a.correct THEN 1 ELSE 0 END) AS correct
RETURN l.id AS learnerId, answered, correct, 1.0 * correct / answered AS accuracy
ORDER BY learnerId
