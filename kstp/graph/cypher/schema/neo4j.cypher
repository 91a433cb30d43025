// Neo4j 5 DDL for the kstp graph model (DESIGN.md §3): a uniqueness constraint on `id`
// per label (which also gives the index every MERGE on {id: ...} needs).
CREATE CONSTRAINT framework_id IF NOT EXISTS FOR (n:Framework) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT domain_id IF NOT EXISTS FOR (n:Domain) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT cluster_id IF NOT EXISTS FOR (n:Cluster) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT concept_id IF NOT EXISTS FOR (n:Concept) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT dataset_id IF NOT EXISTS FOR (n:Dataset) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT question_id IF NOT EXISTS FOR (n:Question) REQUIRE n.id IS UNIQUE;
// A dataset's questions by an index seek (question_keys, the PSR and BLIM reads), not a scan
// of every Question.
CREATE INDEX question_dataset IF NOT EXISTS FOR (n:Question) ON (n.dataset);
CREATE CONSTRAINT learner_id IF NOT EXISTS FOR (n:Learner) REQUIRE n.id IS UNIQUE;
// Learners an ingest has written but not yet shown (kstp.graph.neo4j.STAGED): no query of the
// model matches the label; found by id as Learners are, when the ingest shows them or a re-run
// of a killed one takes them up.
CREATE CONSTRAINT staged_learner_id IF NOT EXISTS FOR (n:StagedLearner) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT run_id IF NOT EXISTS FOR (n:Run) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT response_id IF NOT EXISTS FOR (n:Response) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT knowledge_state_id IF NOT EXISTS FOR (n:KnowledgeState) REQUIRE n.id IS UNIQUE;
// Properties need no DDL on Neo4j; for the record, those added with the Ladybug tables:
// Learner {members, memberAccuracy} on ability groups (kind 'group'), ANSWERED {meanCorrect}
// on a group's answers, and PREREQUISITE_OF {attemptedBoth, counterexamples,
// counterexampleRate, counterexampleLow, counterexampleHigh, contradicted, checkedOn} written
// by `kstp validate prerequisites`.
CREATE CONSTRAINT cot_step_id IF NOT EXISTS FOR (n:CotStep) REQUIRE n.id IS UNIQUE;
// RQEval (paper 3): (:Question)-[:VARIANT_OF {kind}]->(:Question) links a perturbation to
// its original, (:Learner)-[:SCORED_ON {evaluator, runId, items, cq, cs, rs, ls, es, ss}]->
// (:Dataset) holds a model's dimension scores; relationships need no constraint here.
// Question.embedding (a list of floats, sentence embeddings for similarity exemplars,
// paper 1 §3.3.1): cosine vector index sized for BGE-M3, the production model, unquantised
// (scores of the stored vectors). Neo4j allows one vector index per property, so a model of
// another size (the 384-d test model) has kstp.graph.vector_search replace it with
// question_embedding_<dimensions>.
CREATE VECTOR INDEX question_embedding IF NOT EXISTS FOR (n:Question) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: 1024, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
// Properties added for paper 1 NB2 and §3.2 need no DDL here (Neo4j is schemaless):
// Question.solution, Question.embeddingModel, Response.strategy, Response.exemplars
// (list of question ids), Response.stage, Response.reasoning (a reasoning model's thinking),
// Run.pending (requests a resumed run still asks), ASSESSES.runId.
// BLIM (issue 15), no DDL needed: Question {careless, guess, carelessSe, guessSe, blimRunId},
// Learner {blimStateId, blimPosterior, blimRunId}, KnowledgeState {probability, blimRunId},
// Run {structure, method, states, logLikelihood, g2, df, pValue, aic, bic, nParameters,
// discrepancy, iterations, bootstrapP, bootstrapSamples, learners}, and
// (:Question)-[:LEARNED_PREREQUISITE_OF {rule, counterexamples, errorRate, inEq1, runId}]->(:Question)
// for ITA/IITA relations, kept apart from the Eq. 1 PREREQUISITE_OF edges.
// Runs an LLM-evaluation engineer can report (issue 35), no DDL needed: Response.prompt (the
// chat asked, JSON), Run {tag (a replicate's name, part of its identity), promptTemplate (the
// template's text, JSON), accuracyStderr}.
// RQEval's RS rule (issue 36), no DDL needed: Run {robustnessRule (paper or present),
// perturbationSlots (P, the slots the paper rule divides by)}.
// DAG-MATH's malformed-reply policy (issue 36), no DDL needed: Run {malformedPolicy (fail or retry:N),
// droppedMalformed (sample slots still malformed after the retries, left out)}.
// Real models' replies (issue 41), no DDL needed: Response {traceRule (where a reasoning trace written
// in the content was split off: </think>, unclosed <think>, ...), textRepair (lone UTF-16 surrogates replaced),
// graderVersion (the grader that wrote its verdict; another version grades it again)}.
// RQEval's grading rule (issue 47), no DDL needed: Run {gradingRule (release or kstp)}.
// A running run's process (issue 43), no DDL needed: Run {pid, host} (a run whose process is gone was killed),
// figures (the run's summary figures as JSON: pass@k, maj@k, their standard errors, estimators, truncation).
// A model's PSR on its run's dataset (issue 42), no DDL needed: Run {psrMicro, psrMacro, psrAnswers}
// (kstp evaluate psr; a model answers several datasets, so its Learner node keeps none).
// Adaptive assessment (issue 46), no DDL needed: Run {learner (the assessed learner's id), assessment (the path,
// state, fringes and prediction, JSON), asked (questions asked), predictedAccuracy (over all questions)}.
// A campaign's finished cells (issue 45), no DDL needed: Run {campaignCell (the SHA-256 of the cell's command that
// finished the run; kstp campaign run skips the cell while its command is the same)}.
