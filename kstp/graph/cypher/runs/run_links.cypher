// name: run_links
// params: $runId: string
// returns: many {type, fromLabel, toLabel, fromId, toId}
// The relationships that carry a run's id: a model's ANSWERED edges (its primary
// sample per question), RQEval's SCORED_ON, an annotator's ASSESSES links and the
// ITA/IITA relation of a prerequisite fit. ANSWERED is read by its runId property, a
// scan of every answer: deleting a run is rare, and no index covers it.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)
WHERE a.runId = $runId
RETURN 'ANSWERED' AS type, 'Learner' AS fromLabel, 'Question' AS toLabel, l.id AS fromId, q.id AS toId
UNION ALL
MATCH (l:Learner)-[s:SCORED_ON]->(d:Dataset)
WHERE s.runId = $runId
RETURN 'SCORED_ON' AS type, 'Learner' AS fromLabel, 'Dataset' AS toLabel, l.id AS fromId, d.id AS toId
UNION ALL
MATCH (q:Question)-[s:ASSESSES]->(c:Concept)
WHERE s.runId = $runId
RETURN 'ASSESSES' AS type, 'Question' AS fromLabel, 'Concept' AS toLabel, q.id AS fromId, c.id AS toId
UNION ALL
MATCH (a:Question)-[p:LEARNED_PREREQUISITE_OF]->(b:Question)
WHERE p.runId = $runId
RETURN 'LEARNED_PREREQUISITE_OF' AS type, 'Question' AS fromLabel, 'Question' AS toLabel, a.id AS fromId,
       b.id AS toId
