// name: question_answer_counts
// params: $dataset: string
// returns: many {questionId, kind, answered, correct}
// Per question of a dataset and learner kind (human, model, group), how many learners
// answered it and how many of them correctly (their ANSWERED edges: one per learner and
// question). The share of humans right on kstp explore's question pages.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN q.id AS questionId, l.kind AS kind, count(a) AS answered,
       sum(CASE WHEN a.correct THEN 1 ELSE 0 END) AS correct
ORDER BY questionId, kind
