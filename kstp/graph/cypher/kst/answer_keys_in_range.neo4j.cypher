// name: answer_keys_in_range
// params: $dataset: string, $lo: string, $hi: string
// returns: many {learnerKey, questionKey, correct}
// Neo4j form: the node keys are the integer node ids (`id()`, no string per answer on the
// wire), as `dataset_learners` and `question_keys` return them in their Neo4j forms. A
// learner with a dataset answers that dataset's questions alone (see `dataset_learners`):
// the OR, evaluated left to right, reads no question's dataset for its answers (1.5 s of
// 4 on the server at XES3G5M scale); a model's answers are filtered one by one. No label on
// q: with one, Neo4j 5.26 planned a cartesian product of the dataset's questions and the
// batch's learners.
MATCH (l:Learner)
WHERE l.id >= $lo AND l.id <= $hi
MATCH (l)-[a:ANSWERED]->(q)
WHERE l.dataset = $dataset OR q.dataset = $dataset
RETURN id(l) AS learnerKey, id(q) AS questionKey, a.correct AS correct
