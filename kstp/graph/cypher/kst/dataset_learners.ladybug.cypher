// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind, learnerKey}
// Learners who answered a question of the dataset, with their kind (human, model, group).
// Ladybug form: filters on Question.dataset (written with IN_DATASET by the loaders);
// the join to the Dataset node took 4x longer at 5 M answers on Ladybug 0.22. The
// learner key is the node offset, as the Ladybug form of `answer_keys_in_range` returns it.
// A learner with a dataset answers that dataset's questions alone (see the default form).
MATCH (l:Learner)
WHERE coalesce(l.dataset, $dataset) = $dataset
  AND EXISTS { MATCH (l)-[:ANSWERED]->(q:Question) WHERE q.dataset = $dataset }
RETURN l.id AS learnerId, l.kind AS kind, offset(id(l)) AS learnerKey
ORDER BY learnerId
