// name: dataset_learner_figures
// params: $dataset: string
// returns: many {learnerId, kind, localId, accuracy, psrMicro, psrMacro, nAnswered, blimStateId, blimPosterior}
// The learners of a dataset with the figures stored on them: accuracy and PSR of the
// latest kstp evaluate psr, the most likely state of the latest BLIM fit. A human
// learner or group belongs to its dataset (its dataset property); a model to every
// dataset it answered. Two parts of a UNION, so only models are searched for answers
// (an OR with the EXISTS made Ladybug test every learner: 3.7 s for 18 k learners).
// Unordered: the caller sorts.
MATCH (l:Learner)
WHERE l.dataset = $dataset
RETURN l.id AS learnerId, l.kind AS kind, l.localId AS localId, l.accuracy AS accuracy, l.psrMicro AS psrMicro,
       l.psrMacro AS psrMacro, l.nAnswered AS nAnswered, l.blimStateId AS blimStateId,
       l.blimPosterior AS blimPosterior
UNION
MATCH (l:Learner {kind: 'model'})
WHERE EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
RETURN l.id AS learnerId, l.kind AS kind, l.localId AS localId, l.accuracy AS accuracy, l.psrMicro AS psrMicro,
       l.psrMacro AS psrMacro, l.nAnswered AS nAnswered, l.blimStateId AS blimStateId,
       l.blimPosterior AS blimPosterior
