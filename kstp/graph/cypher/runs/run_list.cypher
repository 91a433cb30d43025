// name: run_list
// params: $evaluator: string, $model: string, $dataset: string
// returns: many {runId, evaluator, model, backend, dataset, config, status, startedAt, finishedAt, requested, completed, accuracy, cq, perfectReasoningRate, exactSetAccuracy, logLikelihood, pid, host}
// Every run, narrowed to an evaluator, a model and a dataset where one is given (''
// matches any), newest first, with the figures each evaluator puts on its run
// (kstp runs list picks the evaluator's headline among them).
MATCH (r:Run)
WHERE ($evaluator = '' OR r.evaluator = $evaluator)
  AND ($model = '' OR r.model = $model)
  AND ($dataset = '' OR r.dataset = $dataset)
RETURN r.id AS runId, r.evaluator AS evaluator, r.model AS model, r.backend AS backend, r.dataset AS dataset,
       r.config AS config, r.status AS status, r.startedAt AS startedAt, r.finishedAt AS finishedAt,
       r.requested AS requested, r.completed AS completed, r.accuracy AS accuracy, r.cq AS cq,
       r.perfectReasoningRate AS perfectReasoningRate, r.exactSetAccuracy AS exactSetAccuracy,
       r.logLikelihood AS logLikelihood, r.pid AS pid, r.host AS host
ORDER BY coalesce(startedAt, finishedAt) DESC, runId
