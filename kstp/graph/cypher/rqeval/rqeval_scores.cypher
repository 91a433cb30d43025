// name: rqeval_scores
// params: $evaluator: string
// returns: many {model, dataset, runId, items, cq, cs, rs, ls, es, ss}
// The six dimension scores of every (model, dataset) pair an evaluator scored: the
// observations of the scenario rankings and of discriminant validity (paper 3, §3.3-3.4).
MATCH (l:Learner)-[s:SCORED_ON {evaluator: $evaluator}]->(d:Dataset)
RETURN l.localId AS model, d.id AS dataset, s.runId AS runId, s.items AS items, s.cq AS cq, s.cs AS cs,
       s.rs AS rs, s.ls AS ls, s.es AS es, s.ss AS ss
ORDER BY model, dataset
