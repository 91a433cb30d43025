// name: blim_learners
// params: $dataset: string
// returns: many {learnerId, stateId, posterior, runId}
// Each learner's most likely knowledge state under the dataset's latest BLIM fit and
// its posterior probability.
MATCH (l:Learner {dataset: $dataset})
WHERE l.blimRunId IS NOT NULL
RETURN l.id AS learnerId, l.blimStateId AS stateId, l.blimPosterior AS posterior, l.blimRunId AS runId
ORDER BY learnerId
