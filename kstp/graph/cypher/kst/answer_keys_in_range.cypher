// name: answer_keys_in_range
// params: $dataset: string, $lo: string, $hi: string
// returns: many {learnerKey, questionKey, correct}
// The ANSWERED edges into a dataset's questions from the learners whose id lies in
// [$lo, $hi], so that PSR reads a large log in batches with bounded memory (ranges taken
// from `dataset_learners`, which orders ids the engine's way). Learner and question come
// as the engine's node keys of `dataset_learners` and `question_keys`: the ids here, the
// node offsets in the Ladybug form. Filters on Question.dataset, written with IN_DATASET
// by the loaders: on Ladybug 0.22 the join to the Dataset node costs 4-8x more at 5 M answers.
// No label on q (ANSWERED ends only at questions): with one, Neo4j 5.26 planned a cartesian
// product of the dataset's questions and the batch's learners, 80x slower at 720 learners.
MATCH (l:Learner)
WHERE l.id >= $lo AND l.id <= $hi
MATCH (l)-[a:ANSWERED]->(q)
WHERE q.dataset = $dataset
RETURN l.id AS learnerKey, q.id AS questionKey, a.correct AS correct
