// name: dataset_learners
// params: $dataset: string
// returns: many {learnerId, kind, learnerKey}
// Learners who answered a question of the dataset, with their kind (human, model, group)
// and their node key for `answer_keys_in_range` (the id here; an offset on Ladybug).
// A learner with a dataset (a human or an ability group: the loaders name them inside it)
// answers that dataset's questions alone, so only the others' answers are searched.
MATCH (l:Learner)
WHERE coalesce(l.dataset, $dataset) = $dataset
  AND EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
RETURN l.id AS learnerId, l.kind AS kind, l.id AS learnerKey
ORDER BY learnerId
