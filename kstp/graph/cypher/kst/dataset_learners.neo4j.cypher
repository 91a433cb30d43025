// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind, learnerKey}
// Learners who answered a question of the dataset, with their kind (human, model, group).
// Neo4j form: the learner key is the integer node id, as the Neo4j form of
// `answer_keys_in_range` returns it; the filter on Question.dataset (written with
// IN_DATASET by the loaders) stops at a learner's first answer into the dataset, where the
// join to the Dataset node was planned as a check of every question of the dataset against
// every learner (73 M db hits for 1,083 learners of 4,118 questions).
MATCH (l:Learner)
WHERE EXISTS { MATCH (l)-[:ANSWERED]->(q:Question) WHERE q.dataset = $dataset }
RETURN l.id AS learnerId, l.kind AS kind, id(l) AS learnerKey
ORDER BY learnerId
