// name: contradicted_prerequisites
// params: $dataset: string
// returns: many {fromId, toId, attemptedBoth, counterexamples, counterexampleRate, counterexampleLow, counterexampleHigh}
// The question prerequisite edges of a dataset that kstp validate prerequisites flagged
// as contradicted by the learners' answers (the counterexample rate's whole Wilson
// interval above the tolerance), worst first (by the interval's lower bound).
MATCH (a:Question)-[r:PREREQUISITE_OF]->(b:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE r.contradicted = true
RETURN a.id AS fromId, b.id AS toId, r.attemptedBoth AS attemptedBoth, r.counterexamples AS counterexamples,
       r.counterexampleRate AS counterexampleRate, r.counterexampleLow AS counterexampleLow,
       r.counterexampleHigh AS counterexampleHigh
ORDER BY counterexampleLow DESC, fromId, toId
