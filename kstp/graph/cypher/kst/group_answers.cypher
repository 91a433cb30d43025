// name: group_answers
// params: $dataset: string, $learnerIds: list<string>, $questionIds: list<string>
// returns: many {questionId, attempts, correct}
// Per question of $dataset, how many of the given learners (the members of a human
// ability group) answered it and how many answered it correctly: the group's mean
// accuracy on the question is correct / attempts, and its knowledge state holds the
// questions where that mean exceeds a threshold (Cui, Do, Sachan 2026, §5.3). Only
// questions in $questionIds count (Appendix B leaves out questions without a concept).
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE l.id IN $learnerIds AND q.id IN $questionIds
RETURN q.id AS questionId, count(a) AS attempts, sum(CASE WHEN a.correct THEN 1 ELSE 0 END) AS correct
ORDER BY questionId
