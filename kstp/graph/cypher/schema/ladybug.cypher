// LadybugDB DDL for the kstp graph model (DESIGN.md §3). One primary key `id` per node
// table; a relationship table lists every (FROM, TO) pair it may join. Property order
// here is the column order of bulk COPY loads, so append new properties at the end.
CREATE NODE TABLE IF NOT EXISTS Framework(id STRING, name STRING, source STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Domain(id STRING, code STRING, name STRING, grade STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Cluster(id STRING, code STRING, name STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Concept(id STRING, framework STRING, localId STRING, code STRING, description STRING, grade STRING, exampleProblem STRING, depth INT64, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Dataset(id STRING, name STRING, source STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Question(id STRING, dataset STRING, localId STRING, text STRING, answer STRING, answerType STRING, position INT64, difficulty DOUBLE, domain STRING, solution STRING, embedding DOUBLE[], embeddingModel STRING, careless DOUBLE, guess DOUBLE, carelessSe DOUBLE, guessSe DOUBLE, blimRunId STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Learner(id STRING, kind STRING, dataset STRING, localId STRING, accuracy DOUBLE, psrMicro DOUBLE, psrMacro DOUBLE, nAnswered INT64, members INT64, memberAccuracy DOUBLE, blimStateId STRING, blimPosterior DOUBLE, blimRunId STRING, PRIMARY KEY(id));
CREATE REL TABLE IF NOT EXISTS PART_OF(FROM Domain TO Framework, FROM Cluster TO Domain, FROM Cluster TO Framework, FROM Concept TO Cluster, FROM Concept TO Framework);
CREATE REL TABLE IF NOT EXISTS PREREQUISITE_OF(FROM Concept TO Concept, FROM Question TO Question, source STRING, rule STRING, attemptedBoth INT64, counterexamples INT64, counterexampleRate DOUBLE, counterexampleLow DOUBLE, counterexampleHigh DOUBLE, contradicted BOOLEAN, checkedOn STRING);
CREATE REL TABLE IF NOT EXISTS RELATED_TO(FROM Concept TO Concept, source STRING);
CREATE REL TABLE IF NOT EXISTS IN_DATASET(FROM Question TO Dataset);
CREATE REL TABLE IF NOT EXISTS ASSESSES(FROM Question TO Concept, source STRING, verified BOOLEAN, runId STRING);
CREATE REL TABLE IF NOT EXISTS ANSWERED(FROM Learner TO Question, correct BOOLEAN, runId STRING, timestamp STRING, position INT64, meanCorrect DOUBLE);
CREATE NODE TABLE IF NOT EXISTS Run(id STRING, evaluator STRING, evaluatorVersion STRING, model STRING, backend STRING, dataset STRING, sampling STRING, promptTemplateHash STRING, configHash STRING, config STRING, gitHash STRING, kstpVersion STRING, startedAt STRING, finishedAt STRING, status STRING, requested INT64, completed INT64, failed INT64, correct INT64, accuracy DOUBLE, passAt1 DOUBLE, perfectReasoningRate DOUBLE, reasoningGap DOUBLE, closenessAuc DOUBLE, invalidFormat INT64, cq DOUBLE, cs DOUBLE, rs DOUBLE, ls DOUBLE, es DOUBLE, ss DOUBLE, nliBackend STRING, similarityModel STRING, nliInvalid INT64, invalid INT64, exactSetAccuracy DOUBLE, structure STRING, method STRING, states INT64, logLikelihood DOUBLE, g2 DOUBLE, df INT64, pValue DOUBLE, aic DOUBLE, bic DOUBLE, nParameters INT64, discrepancy DOUBLE, iterations INT64, bootstrapP DOUBLE, bootstrapSamples INT64, learners INT64, pending INT64, concurrency INT64, generationS DOUBLE, completionsPerS DOUBLE, tokensPerS DOUBLE, tag STRING, promptTemplate STRING, accuracyStderr DOUBLE, robustnessRule STRING, perturbationSlots INT64, malformedPolicy STRING, droppedMalformed INT64, gradingRule STRING, pid INT64, host STRING, figures STRING, psrMicro DOUBLE, psrMacro DOUBLE, psrAnswers INT64, learner STRING, assessment STRING, asked INT64, predictedAccuracy DOUBLE, campaignCell STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS Response(id STRING, model STRING, question STRING, promptHash STRING, sampleIndex INT64, seed INT64, text STRING, extracted STRING, extractionMethod STRING, correct BOOLEAN, verdict STRING, finishReason STRING, error STRING, tokensIn INT64, tokensOut INT64, latencyS DOUBLE, createdAt STRING, cotValid BOOLEAN, cotError STRING, closed BOOLEAN, closedShare DOUBLE, perfect BOOLEAN, cotNodes INT64, cotEdges INT64, cotDensity DOUBLE, cotMaxInDegree INT64, cotMaxOutDegree INT64, ls DOUBLE, stepPairs INT64, contradictions INT64, nliBackend STRING, ss DOUBLE, catalogue STRING, stateId STRING, condition STRING, presentation INT64, attempt INT64, cellKey STRING, invalidKind STRING, predicted STRING, predictedPairs STRING, reference STRING, precision DOUBLE, recall DOUBLE, f1 DOUBLE, jaccard DOUBLE, symDiff INT64, strategy STRING, exemplars STRING[], stage STRING, reasoning STRING, reasoningRelevance INT64, reasoningCoherence INT64, reasoningAccuracy INT64, reasoningRunId STRING, systemInUser BOOLEAN, prompt STRING, traceRule STRING, textRepair STRING, graderVersion STRING, PRIMARY KEY(id));
CREATE REL TABLE IF NOT EXISTS GAVE(FROM Learner TO Response);
CREATE REL TABLE IF NOT EXISTS TO(FROM Response TO Question);
CREATE REL TABLE IF NOT EXISTS IN_RUN(FROM Response TO Run);
CREATE NODE TABLE IF NOT EXISTS KnowledgeState(id STRING, dataset STRING, size INT64, source STRING, weight INT64, probability DOUBLE, blimRunId STRING, PRIMARY KEY(id));
CREATE REL TABLE IF NOT EXISTS CONTAINS(FROM KnowledgeState TO Question);
CREATE NODE TABLE IF NOT EXISTS CotStep(id STRING, stepId INT64, position INT64, node STRING, edge STRING, final BOOLEAN, closed BOOLEAN, outDegree INT64, PRIMARY KEY(id));
CREATE REL TABLE IF NOT EXISTS HAS_STEP(FROM Response TO CotStep);
CREATE REL TABLE IF NOT EXISTS SUPPORTS(FROM CotStep TO CotStep);
// RQEval (paper 3): a perturbed or paraphrased question points at its original; a
// model's six dimension scores on a dataset, from its latest rqeval run.
CREATE REL TABLE IF NOT EXISTS VARIANT_OF(FROM Question TO Question, kind STRING);
CREATE REL TABLE IF NOT EXISTS SCORED_ON(FROM Learner TO Dataset, evaluator STRING, runId STRING, items INT64, cq DOUBLE, cs DOUBLE, rs DOUBLE, ls DOUBLE, es DOUBLE, ss DOUBLE);
// BLIM and data-learned prerequisites (issue 15): the latest BLIM fit of a dataset puts
// careless/guess rates on its Questions, state probabilities on its KnowledgeStates and
// each learner's most likely state on the Learner; ITA/IITA relations learned from the
// answers are kept apart from the Eq. 1 edges, which every KST query reads.
CREATE REL TABLE IF NOT EXISTS LEARNED_PREREQUISITE_OF(FROM Question TO Question, rule STRING, counterexamples INT64, errorRate DOUBLE, inEq1 BOOLEAN, runId STRING);
