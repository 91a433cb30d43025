// name: question_prerequisite_counterexamples
// params: $dataset: string
// returns: many {fromId, toId, attemptedBoth, counterexamples}
// Every question prerequisite edge p -> q of $dataset checked against the human learner
// logs: how many learners answered both p and q, and how many of them answered q
// correctly while failing p - a counterexample to "q needs p" (item tree analysis).
// Edges nobody attempted both ends of have attemptedBoth = 0.
MATCH (p:Question)-[:PREREQUISITE_OF]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
OPTIONAL MATCH (p)<-[ap:ANSWERED]-(l:Learner)-[aq:ANSWERED]->(q)
WHERE l.kind = 'human'
RETURN p.id AS fromId, q.id AS toId, count(l) AS attemptedBoth,
       sum(CASE WHEN aq.correct AND NOT ap.correct THEN 1 ELSE 0 END) AS counterexamples
ORDER BY fromId, toId
