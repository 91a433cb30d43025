// name: dataset_learner_figures
// params: $dataset: string
// returns: many {learnerId, kind, localId, accuracy, psrMicro, psrMacro, nAnswered, blimStateId, blimPosterior, runId}
// The learners of a dataset with their figures on it. A human learner or group belongs to
// its dataset (its dataset property): accuracy and PSR as the latest kstp evaluate psr
// stored them on it, the most likely state of the latest BLIM fit; no runId (a typed null:
// Ladybug's UNION takes no untyped NULL). A model belongs to every dataset it answered, so
// nothing on its node is this dataset's: its accuracy and answers are counted here from
// its answers into the dataset; runId is the run they all came from (none if several);
// its PSR is the one kstp evaluate psr stored on that run, where as many answers were
// scored then; its BLIM state only if the fit that wrote it is this dataset's. Two parts
// of a UNION, so only models are searched for answers (an OR with the EXISTS made Ladybug
// test every learner: 3.7 s for 18 k learners). Unordered: the caller sorts.
MATCH (l:Learner)
WHERE l.dataset = $dataset
RETURN l.id AS learnerId, l.kind AS kind, l.localId AS localId, l.accuracy AS accuracy, l.psrMicro AS psrMicro,
       l.psrMacro AS psrMacro, l.nAnswered AS nAnswered, l.blimStateId AS blimStateId,
       l.blimPosterior AS blimPosterior, CASE WHEN l.id IS NULL THEN l.id ELSE NULL END AS runId
UNION
MATCH (l:Learner {kind: 'model'})-[a:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WITH l, count(a) AS answered, sum(CASE WHEN a.correct THEN 1 ELSE 0 END) AS right, count(a.runId) AS fromRuns,
     min(a.runId) AS firstRun, max(a.runId) AS lastRun
OPTIONAL MATCH (r:Run {id: firstRun})
WHERE firstRun = lastRun AND fromRuns = answered AND r.psrAnswers = answered
OPTIONAL MATCH (b:Run {id: l.blimRunId})
RETURN l.id AS learnerId, l.kind AS kind, l.localId AS localId, 1.0 * right / answered AS accuracy,
       r.psrMicro AS psrMicro, r.psrMacro AS psrMacro, answered AS nAnswered,
       CASE WHEN b.dataset = $dataset THEN l.blimStateId ELSE NULL END AS blimStateId,
       CASE WHEN b.dataset = $dataset THEN l.blimPosterior ELSE NULL END AS blimPosterior,
       CASE WHEN firstRun = lastRun AND fromRuns = answered THEN firstRun ELSE NULL END AS runId
