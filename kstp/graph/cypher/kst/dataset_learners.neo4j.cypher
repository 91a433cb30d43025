// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind, learnerKey}
// Learners who answered a question of the dataset, with their kind (human, model, group).
// Neo4j form: the learner key is the integer node id, as the Neo4j form of
// `answer_keys_in_range` returns it. A learner with a dataset (a human or an ability group:
// the loaders name them inside it) answers that dataset's questions alone: the learners of
// other datasets are passed over by their property, where searching their answers took
// 4.5 s at XES3G5M scale with a second dataset of 18,066 learners in the graph. The filter on
// Question.dataset (written with IN_DATASET by the loaders) stops at a learner's first
// answer into the dataset; the join to the Dataset node was planned as a check of every
// question of the dataset against every learner.
MATCH (l:Learner)
WHERE coalesce(l.dataset, $dataset) = $dataset
  AND EXISTS { MATCH (l)-[:ANSWERED]->(q:Question) WHERE q.dataset = $dataset }
RETURN l.id AS learnerId, l.kind AS kind, id(l) AS learnerKey
ORDER BY learnerId
