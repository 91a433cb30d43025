// name: run_outcomes
// params: $runId: string
// returns: many {label, id}
// The nodes that hold a BLIM fit's outcome properties (blimRunId = the run): its
// Questions' careless and guess rates, its Learners' most likely states and its
// KnowledgeStates' probabilities.
MATCH (q:Question)
WHERE q.blimRunId = $runId
RETURN 'Question' AS label, q.id AS id
UNION ALL
MATCH (l:Learner)
WHERE l.blimRunId = $runId
RETURN 'Learner' AS label, l.id AS id
UNION ALL
MATCH (k:KnowledgeState)
WHERE k.blimRunId = $runId
RETURN 'KnowledgeState' AS label, k.id AS id
