// name: question_prerequisites
// params: $dataset: string, $reflexive: boolean
// returns: many {fromId, toId}
// Ladybug: SHORTEST visits each reachable concept once instead of enumerating every
// path (a 52-concept lattice has millions of paths and took 20 GB); the path of length
// 0 (c_a = c_b, reflexive rule) is added as the concept itself. Otherwise as the
// portable form: Eq. 1 of Cui, Do, Sachan 2026.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(:Question)-[:ASSESSES]->(ci:Concept)
WITH DISTINCT ci
OPTIONAL MATCH (ci)-[:PREREQUISITE_OF* SHORTEST 1..]->(below:Concept)
WITH ci, collect(DISTINCT below.id) AS reached
UNWIND CASE WHEN $reflexive THEN reached + [ci.id] ELSE reached END AS cjId
WITH DISTINCT ci, cjId
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(qi:Question)-[:ASSESSES]->(ci)
MATCH (cj:Concept {id: cjId})<-[:ASSESSES]-(qj:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE qj.id <> qi.id
WITH qi, qj, count(DISTINCT ci) AS covered
MATCH (qi)-[:ASSESSES]->(c:Concept)
WITH qi, qj, covered, count(DISTINCT c) AS needed
WHERE covered = needed
RETURN qi.id AS fromId, qj.id AS toId
ORDER BY fromId, toId
