// name: learner_assessments
// params: $learner: string
// returns: many {runId, dataset, status, asked, predictedAccuracy, assessment, startedAt, finishedAt}
// A learner's adaptive assessments (kstp assess), newest first: each one's path,
// state and prediction are in its assessment (JSON).
MATCH (r:Run)
WHERE r.evaluator = 'assess' AND r.learner = $learner
RETURN r.id AS runId, r.dataset AS dataset, r.status AS status, r.asked AS asked,
       r.predictedAccuracy AS predictedAccuracy, r.assessment AS assessment, r.startedAt AS startedAt,
       r.finishedAt AS finishedAt
ORDER BY startedAt DESC, runId
