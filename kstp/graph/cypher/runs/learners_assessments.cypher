// name: learners_assessments
// params: $learners: list<string>
// returns: many {learner, runId, dataset, status, asked, predictedAccuracy, assessment, startedAt, finishedAt}
// learner_assessments of many learners in one read (the explorer's export): by learner,
// then newest first.
MATCH (r:Run)
WHERE r.evaluator = 'assess' AND r.learner IN $learners
RETURN r.learner AS learner, r.id AS runId, r.dataset AS dataset, r.status AS status, r.asked AS asked,
       r.predictedAccuracy AS predictedAccuracy, r.assessment AS assessment, r.startedAt AS startedAt,
       r.finishedAt AS finishedAt
ORDER BY learner, startedAt DESC, runId
