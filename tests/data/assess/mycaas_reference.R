## Reference posteriors, half-split choices and whole assessments from R's mycaas for kstp's
## adaptive assessment (issue 46), on the example structures pks ships and mycaas's own example.
## Run from the repository root:
##   MYCAAS_R=<mycaas's R/ folder> R_LIBS=<library with pks> Rscript tests/data/assess/mycaas_reference.R tests/data/assess
## Writes mycaas_reference.json. mycaas's functions are sourced from its R files (its package
## imports ggplot2, igraph, rPref and shiny, which the functions used here do not call).
args <- commandArgs(trailingOnly = TRUE)
out_dir <- args[1]
mycaas <- Sys.getenv("MYCAAS_R")
for (f in c("Updating_rule.R", "Questioning_rule.R", "Termination_rule.R", "Assessment.R")) {
  source(file.path(mycaas, f))
}
suppressMessages({library(pks); library(jsonlite)})
data(DoignonFalmagne7); data(endm)

## the half-split choices mycaas may make: its function draws among ties at random, so it is called
## 64 times under different seeds and the distinct answers kept (its tie set).
ties <- function(likelihood, states, beta, eta, pool) {
  sort(unique(sapply(1:64, function(s) { set.seed(s); half_split(likelihood, states, beta, eta, pool) })))
}

## A fixed answer sequence: items asked in `order`, answers `answers`; the posterior and mycaas's
## half-split tie set (over the items not asked yet) before each question.
sequence_record <- function(prior, states, beta, eta, order, answers) {
  likelihood <- prior; steps <- list()
  for (i in seq_along(order)) {
    pool <- setdiff(seq_len(ncol(states)), order[seq_len(i - 1)])
    t <- ties(likelihood, states, beta, eta, pool)
    likelihood <- updating(likelihood, states, order[i], answers[i], beta, eta)
    steps[[i]] <- list(item = order[i], correct = answers[i], ties_before = t, posterior = likelihood,
                       stop_0.5 = stopping_criterion(likelihood, states, "likelihood_maximization", 0.5),
                       stop_items_0.2_0.8 = stopping_criterion(likelihood, states, "items_discrimination",
                                                               c(0.2, 0.8)))
  }
  steps
}

## Whole simulated assessments (mycaas's assessment(), simulation = TRUE): one per true state of
## positive prior, seeded by its row; the questions, answers, final posterior, state and length.
assessments <- function(prior, states, beta, eta, SC, termination = "likelihood_maximization") {
  runs <- list()
  for (ki in which(prior > 1e-6)) {
    set.seed(1000 + ki)
    a <- assessment(prior, states, beta, eta, questioning_rule = "half_split", termination = termination,
                    SC = SC, ki = ki)
    runs[[length(runs) + 1]] <- list(true_state = ki, questions = a$qorder, answers = a$rorder,
                                     posterior = a$likelihood, state = a$kstate, posterior_max = a$P_kstate,
                                     asked = a$n)
  }
  runs
}

case <- function(name, states, beta, eta, prior, sequences, SC) {
  storage.mode(states) <- "integer"
  list(name = name, states = unname(apply(states, 1, paste, collapse = "")), beta = unname(beta),
       eta = unname(eta), prior = unname(prior),
       sequences = lapply(sequences, function(s) list(order = s$order, answers = s$answers,
                                                       steps = sequence_record(prior, states, beta, eta,
                                                                               s$order, s$answers))),
       threshold = SC, assessments = assessments(prior, states, beta, eta, SC),
       assessments_items_0.2_0.8 = assessments(prior, states, beta, eta, c(0.2, 0.8), "items_discrimination"))
}

out <- list()
## mycaas's own example (Brancaccio, de Chiusole & Stefanutti 2023, Example 1), uniform prior
ex <- matrix(c(0,0,0,0,0, 0,0,0,0,1, 0,0,1,0,1, 0,0,0,1,1, 0,0,1,1,1, 1,0,1,0,1, 0,1,0,1,1,
               1,0,1,1,1, 0,1,1,1,1, 1,1,0,1,1, 1,1,1,1,1), byrow = TRUE, ncol = 5)
ex_beta <- c(.004, .03, .02, .01, .007); ex_eta <- c(5e-06, 5e-05, 4e-05, .007, .08)
out$mycaas_example1 <- case("mycaas_example1", ex, ex_beta, ex_eta, rep(1, 11) / 11,
                            list(list(order = c(3, 5, 1, 2, 4), answers = c(1, 1, 0, 1, 1)),
                                 list(order = c(5, 4, 3, 2, 1), answers = c(0, 1, 1, 0, 1))), 0.5)
## mycaas's half_split example: three states left, pool {2, 4, 5}
out$mycaas_half_split_example <- list(
  likelihood = c(0, 0, 0, 0, 0, 1/3, 0, 1/3, 0, 0, 1/3), pool = c(2, 4, 5),
  ties = ties(c(0, 0, 0, 0, 0, 1/3, 0, 1/3, 0, 0, 1/3), ex, ex_beta, ex_eta, c(2, 4, 5)))

## pks's DoignonFalmagne7 (a space on 5 items) and endm's K (not union-closed): their ML BLIM fits
for (d in list(list(name = "DoignonFalmagne7", K = DoignonFalmagne7$K, N.R = DoignonFalmagne7$N.R,
                    seq = list(list(order = c(1, 2, 3, 4, 5), answers = c(1, 1, 0, 1, 0)),
                               list(order = c(5, 3, 1, 4, 2), answers = c(1, 1, 1, 0, 1)))),
          list(name = "endm_K", K = endm$K, N.R = endm$N.R,
               seq = list(list(order = c(1, 2, 3, 4), answers = c(1, 0, 1, 1)),
                          list(order = c(4, 3, 2, 1), answers = c(0, 1, 1, 0)))))) {
  m <- blim(d$K, d$N.R, method = "ML")
  out[[d$name]] <- case(d$name, d$K, m$beta, m$eta, m$P.K, d$seq, 0.5)
  ## the same structure with the fit's rates and a uniform prior
  out[[paste0(d$name, "_uniform")]] <- case(paste0(d$name, "_uniform"), d$K, m$beta, m$eta,
                                              rep(1, nrow(d$K)) / nrow(d$K), d$seq, 0.7)
}
out$versions <- list(R = R.version.string, pks = as.character(packageVersion("pks")),
                     mycaas = read.dcf(file.path(mycaas, "..", "DESCRIPTION"))[, "Version"])
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), file.path(out_dir, "mycaas_reference.json"))
