// name: knowledge_overlap
// params: $dataset: string, $learnerIds: list<string>, $questionIds: list<string>
// returns: many {learnerA, learnerB, shared, sizeA, sizeB, overlap}
// For every pair of the given learners (learnerA < learnerB) that answered a common
// question of $dataset: the shared questions, each one's knowledge state restricted to
// them (ANSWERED {correct: true}) and the size of the intersection - the counts KOC and
// its chance-normalised form are made of (Cui, Do, Sachan 2026, Eq. 6-7). Pairs without a
// shared question have no row. Only questions in $questionIds count (paper 1, Appendix B:
// questions without a concept are left out; pass every question of the dataset to keep them).
MATCH (a:Learner)-[ra:ANSWERED]->(q:Question)<-[rb:ANSWERED]-(b:Learner)
WHERE a.id IN $learnerIds AND b.id IN $learnerIds AND a.id < b.id AND q.id IN $questionIds
  AND EXISTS { MATCH (q)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
RETURN a.id AS learnerA, b.id AS learnerB, count(q) AS shared,
       sum(CASE WHEN ra.correct THEN 1 ELSE 0 END) AS sizeA,
       sum(CASE WHEN rb.correct THEN 1 ELSE 0 END) AS sizeB,
       sum(CASE WHEN ra.correct AND rb.correct THEN 1 ELSE 0 END) AS overlap
ORDER BY learnerA, learnerB
