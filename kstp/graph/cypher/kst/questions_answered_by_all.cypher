// name: questions_answered_by_all
// params: $dataset: string, $learnerIds: list<string>
// returns: many {questionId}
// The questions of a dataset that every one of the given learners answered (right or
// wrong): the common question set on which GDS compares their states (paper 1, Eq. 6).
MATCH (l:Learner)-[:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE l.id IN $learnerIds
WITH q, count(DISTINCT l) AS answeredBy
WHERE answeredBy = size($learnerIds)
RETURN q.id AS questionId
