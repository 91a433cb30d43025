// name: knowledge_state
// params: $dataset: string, $learnerId: string
// returns: many {questionId}
// A learner's knowledge state: the questions of $dataset it answered correctly.
MATCH (:Learner {id: $learnerId})-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE a.correct
RETURN DISTINCT q.id AS questionId
ORDER BY questionId
