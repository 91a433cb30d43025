// name: psr_distribution
// params: $dataset: string, $minPrerequisites: integer
// returns: many {bucket, pairs}
// Question-level PSR distribution (Cui, Do, Sachan 2026, §3.3.1): for every (learner,
// correctly answered question) with at least $minPrerequisites attempted prerequisites,
// psr = satisfied / attempted, counted in six buckets: 0 = [0,.2), 1 = [.2,.4),
// 2 = [.4,.6), 3 = [.6,.8), 4 = [.8,1), 5 = exactly 1.
MATCH (l:Learner)-[a:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE a.correct
MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
MATCH (l)-[ap:ANSWERED]->(p)
WITH l, q, count(ap) AS observed, sum(CASE WHEN ap.correct THEN 1 ELSE 0 END) AS satisfied
WHERE observed >= $minPrerequisites
WITH CASE WHEN satisfied = observed THEN 5
          WHEN 5.0 * satisfied < 1.0 * observed THEN 0
          WHEN 5.0 * satisfied < 2.0 * observed THEN 1
          WHEN 5.0 * satisfied < 3.0 * observed THEN 2
          WHEN 5.0 * satisfied < 4.0 * observed THEN 3
          ELSE 4 END AS bucket
RETURN bucket, count(*) AS pairs
ORDER BY bucket
