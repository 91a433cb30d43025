// name: learner_answers
// params: $learnerId: string
// returns: many {datasetId, questionId, localId, position, correct, runId, timestamp}
// Every answer of one learner (its ANSWERED edges) with the question's dataset and, for
// a model, the run the answer came from; by dataset, then question position and id.
MATCH (:Learner {id: $learnerId})-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(d:Dataset)
RETURN d.id AS datasetId, q.id AS questionId, q.localId AS localId, q.position AS position, a.correct AS correct,
       a.runId AS runId, a.timestamp AS timestamp
ORDER BY datasetId, position, questionId
