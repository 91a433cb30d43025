// name: vector_nearest_questions
// params: $targets: list<string>, $index: string, $n: integer, $pool: list<string>
// returns: many {questionId, candidateId, score}
// engine: neo4j
// The $n nearest questions of each target by the cosine vector index $index on
// Question.embedding, less the target itself and every node outside $pool; the
// caller orders them by the float64 cosine of the stored vectors (paper 1, §3.3.1).
UNWIND $targets AS target
MATCH (q:Question {id: target})
CALL db.index.vector.queryNodes($index, $n, q.embedding) YIELD node, score
WITH target, node, score
WHERE node.id <> target AND node.id IN $pool
RETURN target AS questionId, node.id AS candidateId, score
