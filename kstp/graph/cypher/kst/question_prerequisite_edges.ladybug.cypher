// name: question_prerequisite_edges
// params: $dataset: string
// returns: many {fromId, toId, rule}
// The stored (derived) question prerequisite relation of a dataset: the surmise
// relation without its reflexive pairs. Ladybug form: filters on Question.dataset
// (written with IN_DATASET by the loaders); the join to the Dataset node took 4x
// longer at 1.2 M pairs on Ladybug 0.22.
MATCH (qi:Question)-[r:PREREQUISITE_OF]->(qj:Question)
WHERE qj.dataset = $dataset
RETURN qi.id AS fromId, qj.id AS toId, r.rule AS rule
