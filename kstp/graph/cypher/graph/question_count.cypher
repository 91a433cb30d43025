// name: question_count
// params: none
// returns: one {questions}
// Number of Question nodes, of every dataset: all a vector index over Question.embedding
// can hold (Neo4j answers it from its count store, without a scan).
MATCH (q:Question)
RETURN count(q) AS questions
