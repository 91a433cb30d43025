// name: correct_counts
// params: $learnerIds: list<string>, $questionIds: list<string>
// returns: many {learnerId, correct}
// Per learner, how many of the given questions it answered correctly (learners with
// none are absent): the state sizes of the KOC denominators (paper 1, Eq. 6).
MATCH (l:Learner)-[r:ANSWERED]->(q:Question)
WHERE l.id IN $learnerIds AND q.id IN $questionIds AND r.correct
RETURN l.id AS learnerId, count(q) AS correct
