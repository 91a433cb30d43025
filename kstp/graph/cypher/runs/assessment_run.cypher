// name: assessment_run
// params: $runId: string
// returns: many {runId, learner, dataset, model, status, config, assessment, asked, predictedAccuracy, startedAt, finishedAt}
// One adaptive assessment (kstp assess): its learner, configuration, status and the
// stored path (JSON), which a resumed session replays.
MATCH (r:Run {id: $runId})
WHERE r.evaluator = 'assess'
RETURN r.id AS runId, r.learner AS learner, r.dataset AS dataset, r.model AS model, r.status AS status,
       r.config AS config, r.assessment AS assessment, r.asked AS asked, r.predictedAccuracy AS predictedAccuracy,
       r.startedAt AS startedAt, r.finishedAt AS finishedAt
