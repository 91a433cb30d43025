// name: dataset_learner_figures
// params: $dataset: string
// returns: many {learnerId, kind, localId, accuracy, psrMicro, psrMacro, nAnswered, blimStateId, blimPosterior}
// The learners of a dataset with the figures stored on them: accuracy and PSR of the
// latest kstp evaluate psr, the most likely state of the latest BLIM fit. A human
// learner or group belongs to its dataset (its dataset property); a model to every
// dataset it answered.
MATCH (l:Learner)
WHERE l.dataset = $dataset
   OR (l.kind = 'model' AND EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) })
RETURN l.id AS learnerId, l.kind AS kind, l.localId AS localId, l.accuracy AS accuracy, l.psrMicro AS psrMicro,
       l.psrMacro AS psrMacro, l.nAnswered AS nAnswered, l.blimStateId AS blimStateId,
       l.blimPosterior AS blimPosterior
ORDER BY learnerId
