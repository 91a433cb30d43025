// name: learned_prerequisites
// params: $dataset: string, $rule: string
// returns: many {fromId, toId, counterexamples, errorRate, inEq1}
// Prerequisite pairs learned from the answers by ITA or IITA ($rule), with their
// counterexample counts and whether Eq. 1 derived the same pair.
MATCH (p:Question)-[r:LEARNED_PREREQUISITE_OF {rule: $rule}]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN p.id AS fromId, q.id AS toId, r.counterexamples AS counterexamples, r.errorRate AS errorRate,
       r.inEq1 AS inEq1
ORDER BY fromId, toId
