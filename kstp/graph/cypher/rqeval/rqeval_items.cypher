// name: rqeval_items
// params: $dataset: string
// returns: many {questionId, text, answer, answerType, variantId, variantText, position}
// The items of a dataset with their gold answer and answer type, one row per
// perturbation (variantId null for an item without one): what RQEval generates for
// (paper 3, §3.1). Items without text or gold answer cannot be asked or graded: left out.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.text IS NOT NULL AND q.answer IS NOT NULL
OPTIONAL MATCH (v:Question)-[:VARIANT_OF]->(q)
RETURN q.id AS questionId, q.text AS text, q.answer AS answer, q.answerType AS answerType,
       v.id AS variantId, v.text AS variantText, q.position AS position
ORDER BY position, questionId, variantId
