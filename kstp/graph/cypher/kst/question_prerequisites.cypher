// name: question_prerequisites
// params: $dataset: string, $reflexive: boolean
// returns: many {fromId, toId}
// Eq. 1 of Cui, Do, Sachan 2026: q_i is a prerequisite of q_j iff every concept of q_i
// is a prerequisite of some concept of q_j. Strict ($reflexive = false): a proper,
// transitive concept prerequisite; reflexive: c_a = c_b counts too. Assumes an acyclic
// concept relation, so a path of length 0 is exactly c_a = c_b. Questions of $dataset
// only; questions without concepts take no part. The closure is taken once per
// distinct concept pair before questions are joined in. For checks and small
// datasets: on the 4,118-question XES map it takes about 50 s and 5.5 GB, where
// `kstp derive` (two reads and sparse products) takes half a second.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(ci:Concept)
WITH DISTINCT ci
MATCH (ci)-[:PREREQUISITE_OF*0..]->(cj:Concept)
WHERE $reflexive OR ci.id <> cj.id
WITH DISTINCT ci, cj
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(qi:Question)-[:ASSESSES]->(ci)
MATCH (cj)<-[:ASSESSES]-(qj:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE qj.id <> qi.id
WITH qi, qj, count(DISTINCT ci) AS covered
MATCH (qi)-[:ASSESSES]->(c:Concept)
WITH qi, qj, covered, count(DISTINCT c) AS needed
WHERE covered = needed
RETURN qi.id AS fromId, qj.id AS toId
ORDER BY fromId, toId
