// name: responses_by_id
// params: $ids: list<string>
// returns: many {responseId, text, error, finishReason, correct}
// Stored completions by cache key (a Response id is its cache key).
MATCH (r:Response)
WHERE r.id IN $ids
RETURN r.id AS responseId, r.text AS text, r.error AS error, r.finishReason AS finishReason, r.correct AS correct
