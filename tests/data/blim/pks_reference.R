## Reference estimates from R's pks for kstp's BLIM, ITA and IITA tests.
## Run from the repository root:
##   Rscript tests/data/blim/pks_reference.R ../shared/data/responses tests/data/blim probability_pks 200
##   Rscript tests/data/blim/pks_reference.R ../shared/data/responses tests/data/blim frcsub 0
## (dataset, then the number of bootstrap samples); writes pks_<dataset>.json.
## Needs pks (0.6-0, from CRAN source), sets and jsonlite.
args <- commandArgs(trailingOnly = TRUE)
data_dir <- args[1]; out_dir <- args[2]; dataset <- args[3]; B <- as.integer(args[4])
suppressMessages({library(pks); library(sets); library(jsonlite)})

read_data <- function(name, file) {
  R <- as.matrix(read.csv(file.path(data_dir, name, file), row.names = 1))
  Q <- as.matrix(read.csv(file.path(data_dir, name, "qmatrix.csv"), row.names = 1))
  list(R = R, Q = Q)
}
## Structures: pks::delineate of the Q-matrix (conjunctive skill function) and the
## knowledge space of the skill-inclusion quasi-order (q_i below q_j iff skills(q_i) is
## a subset of skills(q_j): Eq. 1, reflexive rule, on a skill map), the union closure of
## the principal down-sets as pks::ita builds it.
delineated <- function(Q) delineate(data.frame(item = rownames(Q), Q))$K
space <- function(Q) {
  n <- nrow(Q)
  down <- matrix(FALSE, n, n, dimnames = list(rownames(Q), rownames(Q)))
  for (q in 1:n) for (p in 1:n) down[q, p] <- all(Q[p, ] <= Q[q, ])
  K <- rbind(0L, binary_closure(down) * 1L)
  colnames(K) <- rownames(Q)
  K
}
patterns <- function(K) apply(K, 1, paste, collapse = "")
fit_record <- function(m, K, elapsed, ...) {
  list(pks = as.character(packageVersion("pks")), states = unname(patterns(K)),
       P_K = unname(m$P.K), beta = unname(m$beta), eta = unname(m$eta), iter = m$iter,
       loglik = m$loglik, G2 = unname(m$goodness.of.fit["G2"]), df = unname(m$goodness.of.fit["df"]),
       pval = unname(m$goodness.of.fit["pval"]), npar = m$npar, AIC = AIC(m), BIC = BIC(m),
       discrepancy = m$discrepancy, nerror = unname(m$nerror), seconds = elapsed, ...)
}
out <- list()
set.seed(20260115)
files <- c(probability_pks = "responses_full.csv", frcsub = "responses.csv")
for (d in list(c(dataset, files[[dataset]]))) {
  x <- read_data(d[1], d[2])
  R <- x$R; N.R <- as.pattern(R, freq = TRUE)
  for (sname in c("space", "delineated")) {
    K <- if (sname == "space") space(x$Q) else delineated(x$Q)
    for (method in c("ML", "MD", "MDML")) {
      t <- system.time(m <- blim(K, N.R, method = method))[["elapsed"]]
      key <- paste(d[1], sname, method, sep = "/")
      rec <- fit_record(m, K, t)
      if (method == "ML") {
        rec$residuals_deviance <- unname(residuals(m))[m$N.R > 0]
        rec$residuals_pearson <- unname(residuals(m, type = "pearson"))[m$N.R > 0]
        rec$residual_patterns <- names(m$N.R)[m$N.R > 0]
      }
      out[[key]] <- rec
      cat(key, "iter", m$iter, "G2", m$goodness.of.fit["G2"], "s", t, "\n")
    }
  }
  ## Constraints: equal beta on items 1-3, equal eta on items 4-6, eta of item 7 fixed at 0.05.
  K <- delineated(x$Q); n <- ncol(K)
  etafix <- rep(NA, n); etafix[7] <- 0.05
  t <- system.time(m <- blim(K, N.R, method = "ML", betaequal = list(1:3), etaequal = list(4:6),
                             etafix = etafix))[["elapsed"]]
  out[[paste(d[1], "delineated", "ML-constrained", sep = "/")]] <- fit_record(m, K, t)
  ## Parametric bootstrap of G2 (ML, delineated): B refits to data simulated from the fit.
  if (B > 0) {
    m <- blim(K, N.R, method = "ML")
    t <- system.time(g2 <- replicate(B, blim(K, simulate(m), method = "ML")$goodness.of.fit[["G2"]]))[["elapsed"]]
    out[[paste(d[1], "delineated", "ML-bootstrap", sep = "/")]] <- list(
      B = B, G2 = unname(m$goodness.of.fit["G2"]), p = mean(g2 >= m$goodness.of.fit["G2"]), G2_star = g2,
      seconds = t)
    cat("bootstrap", B, "s", t, "\n")
  }
  ## Item tree analysis (local and global threshold search); IITA: daks_reference.R.
  ## Global search on frcsub visits spaces of up to 2^20 states (threshold 0): not run.
  for (search in if (d[1] == "frcsub") "local" else c("local", "global")) {
    t <- system.time(i <- ita(R, search = search, makeK = TRUE))[["elapsed"]]
    out[[paste(d[1], "ita", search, sep = "/")]] <- list(
      L = i$L, transitiveL = i$transitiveL, counterexamples = unname(i$P), relation = unname(i$I) * 1L,
      states = unname(patterns(i$K)), discrepancy = unname(i$discrepancy), seconds = t)
  }
}
out$versions <- list(R = R.version.string, pks = as.character(packageVersion("pks")),
                     sets = as.character(packageVersion("sets")))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = FALSE), file.path(out_dir, paste0("pks_", dataset, ".json")))
