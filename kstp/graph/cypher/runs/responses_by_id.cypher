// name: responses_by_id
// params: $ids: list<string>
// returns: many {responseId, text, reasoning, error, finishReason, correct, verdict, sampleIndex, seed, tokensIn, tokensOut, latencyS, traceRule, graderVersion}
// Stored completions by cache key (a Response id is its cache key), with what a
// grader needs to grade one again (verdict is null for a reply not graded yet).
MATCH (r:Response)
WHERE r.id IN $ids
RETURN r.id AS responseId, r.text AS text, r.reasoning AS reasoning, r.error AS error,
       r.finishReason AS finishReason, r.correct AS correct, r.verdict AS verdict, r.sampleIndex AS sampleIndex,
       r.seed AS seed, r.tokensIn AS tokensIn, r.tokensOut AS tokensOut, r.latencyS AS latencyS,
       r.traceRule AS traceRule, r.graderVersion AS graderVersion
