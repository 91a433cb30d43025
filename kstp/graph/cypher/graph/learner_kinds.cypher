// name: learner_kinds
// params: none
// returns: many {kind, learners}
// How many learners of each kind (human, model, group) the graph holds: the overview of
// kstp explore.
MATCH (l:Learner)
RETURN l.kind AS kind, count(l) AS learners
ORDER BY kind
