// name: psr_by_learner
// params: $dataset: string
// returns: many {learnerId, psrMicro, psrMacro, questionsScored, pairs}
// Per-learner PSR over correctly answered questions; a prerequisite counts only if
// the learner attempted it, and questions with no attempted prerequisite take no part
// (Cui, Do, Sachan 2026, Eq. 2-4). Micro pools (question, prerequisite) pairs; macro
// averages the per-question ratio. One whole-graph aggregation: fine for small data,
// kstp.evaluators.psr streams large logs instead. The filter on a.correct is a WHERE:
// an inline {correct: true} on this pattern gave wrong rows on Ladybug 0.22.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE a.correct
MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
MATCH (l)-[ap:ANSWERED]->(p)
WITH l, q, count(ap) AS observed, sum(CASE WHEN ap.correct THEN 1 ELSE 0 END) AS satisfied
WITH l, sum(satisfied) AS satisfiedPairs, sum(observed) AS observedPairs,
     avg(1.0 * satisfied / observed) AS meanRatio, count(q) AS questionsScored
RETURN l.id AS learnerId, 1.0 * satisfiedPairs / observedPairs AS psrMicro, meanRatio AS psrMacro,
       questionsScored, observedPairs AS pairs
ORDER BY learnerId
