// name: answer_keys_in_range
// params: $dataset: string, $lo: string, $hi: string
// returns: many {learnerKey, questionKey, correct}
// Neo4j form: the node keys are the integer node ids (`id()`, no string per answer on the
// wire: 5.4 M answers read as three lists of integers and booleans), as `dataset_learners`
// and `question_keys` return them in their Neo4j forms. No label on q: with one, Neo4j
// 5.26 planned a cartesian product of the dataset's questions and the batch's learners.
MATCH (l:Learner)
WHERE l.id >= $lo AND l.id <= $hi
MATCH (l)-[a:ANSWERED]->(q)
WHERE q.dataset = $dataset
RETURN id(l) AS learnerKey, id(q) AS questionKey, a.correct AS correct
