// name: dataset_members
// params: $dataset: string
// returns: many {label, id}
// The nodes that belong to one dataset alone: its Questions, its KnowledgeStates and
// the Learners whose every answer, completion and score is on it (human learners of
// its response file, its ability groups, a model asked nothing else). What kstp db
// delete-dataset removes, with the Dataset node and the runs on it.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN 'Question' AS label, q.id AS id
UNION ALL
MATCH (k:KnowledgeState {dataset: $dataset})
RETURN 'KnowledgeState' AS label, k.id AS id
UNION ALL
MATCH (l:Learner)
WHERE (l.dataset = $dataset OR EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) }
       OR EXISTS { MATCH (l)-[:SCORED_ON]->(:Dataset {id: $dataset}) })
  AND NOT EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(o:Dataset) WHERE o.id <> $dataset }
  AND NOT EXISTS { MATCH (l)-[:GAVE]->(:Response)-[:TO]->(:Question)-[:IN_DATASET]->(o:Dataset) WHERE o.id <> $dataset }
  AND NOT EXISTS { MATCH (l)-[:SCORED_ON]->(o:Dataset) WHERE o.id <> $dataset }
RETURN 'Learner' AS label, l.id AS id
