// name: concept_prerequisite_counterexamples
// params: $dataset: string, $mastery: float
// returns: many {fromId, toId, attemptedBoth, counterexamples}
// Every concept prerequisite edge c -> d whose two concepts are both assessed by
// questions of $dataset, checked against the human learner logs. A concept is judged by
// the questions that assess it and not the other end (a question assessing both cannot
// contradict the edge); a learner masters it when the share of those questions answered
// correctly exceeds $mastery. Counted: learners who answered a question of each side,
// and those among them who master d but not c. The shares are compared without division
// (correct > $mastery * answered) so no engine divides by zero.
MATCH (c:Concept)-[:PREREQUISITE_OF]->(d:Concept)
WHERE EXISTS { MATCH (c)<-[:ASSESSES]-(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
  AND EXISTS { MATCH (d)<-[:ASSESSES]-(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
OPTIONAL MATCH (l:Learner)-[a:ANSWERED]->(x:Question)-[:ASSESSES]->(c)
WHERE l.kind = 'human' AND EXISTS { MATCH (x)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
  AND NOT EXISTS { MATCH (x)-[:ASSESSES]->(d) }
WITH c, d, l, count(a) AS fromAnswered, sum(CASE WHEN a.correct THEN 1 ELSE 0 END) AS fromCorrect
OPTIONAL MATCH (l)-[b:ANSWERED]->(y:Question)-[:ASSESSES]->(d)
WHERE EXISTS { MATCH (y)-[:IN_DATASET]->(:Dataset {id: $dataset}) } AND NOT EXISTS { MATCH (y)-[:ASSESSES]->(c) }
WITH c, d, l, fromAnswered, fromCorrect, count(b) AS toAnswered,
     sum(CASE WHEN b.correct THEN 1 ELSE 0 END) AS toCorrect
RETURN c.id AS fromId, d.id AS toId,
       sum(CASE WHEN fromAnswered > 0 AND toAnswered > 0 THEN 1 ELSE 0 END) AS attemptedBoth,
       sum(CASE WHEN fromAnswered > 0 AND toAnswered > 0 AND toCorrect > $mastery * toAnswered
                     AND fromCorrect <= $mastery * fromAnswered THEN 1 ELSE 0 END) AS counterexamples
ORDER BY fromId, toId
