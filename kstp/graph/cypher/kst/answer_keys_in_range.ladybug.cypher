// name: answer_keys_in_range
// params: $dataset: string, $lo: string, $hi: string
// returns: many {learnerKey, questionKey, correct}
// Ladybug form: node offsets instead of ids. Ladybug 0.22 hands 5.4 M rows of two
// integers and a boolean to Arrow in 1.3 s, of two strings and a boolean in 1.8 s.
MATCH (l:Learner)
WHERE l.id >= $lo AND l.id <= $hi
MATCH (l)-[a:ANSWERED]->(q:Question)
WHERE q.dataset = $dataset
RETURN offset(id(l)) AS learnerKey, offset(id(q)) AS questionKey, a.correct AS correct
