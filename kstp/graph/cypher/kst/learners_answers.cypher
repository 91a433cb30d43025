// name: learners_answers
// params: $learnerIds: list<string>
// returns: many {learnerId, datasetId, questionId, localId, position, correct, runId, timestamp}
// learner_answers of many learners in one read (the explorer's export reads its learner
// pages in batches): each learner's answers, by learner, then as learner_answers orders them.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(d:Dataset)
WHERE l.id IN $learnerIds
RETURN l.id AS learnerId, d.id AS datasetId, q.id AS questionId, q.localId AS localId, q.position AS position,
       a.correct AS correct, a.runId AS runId, a.timestamp AS timestamp
ORDER BY learnerId, datasetId, position, questionId
