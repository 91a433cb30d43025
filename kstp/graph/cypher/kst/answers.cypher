// name: answers
// params: $dataset: string
// returns: many {learnerId, questionId, correct}
// Every ANSWERED edge into the questions of a dataset: the learner x item response
// data that PSR and accuracy are computed from.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN l.id AS learnerId, q.id AS questionId, a.correct AS correct
