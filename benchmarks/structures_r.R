## Times R's structure analyses for benchmarks/spaces.py (the structure-analysis table): per
## structure (a 0/1 state matrix in CSV with item names), pks's getKFringe (inner and outer)
## and is.forward.graded, kstMatrix's kmbasis (C code) and kmsurmiserelation.
## Rscript benchmarks/structures_r.R jobs.csv out.json      (jobs.csv: key, K)
args <- commandArgs(trailingOnly = TRUE)
suppressMessages({library(pks); library(jsonlite)})
km <- suppressWarnings(requireNamespace("kstMatrix", quietly = TRUE))
jobs <- read.csv(args[1], stringsAsFactors = FALSE)
best <- function(expr) {  # the least of three runs (one when a run takes over a second)
  f <- substitute(expr); e <- parent.frame()
  t <- system.time(r <- eval(f, e))[["elapsed"]]
  if (t < 1) t <- min(t, replicate(2, system.time(eval(f, e))[["elapsed"]]))
  list(t = t, value = r)
}
out <- list(versions = list(R = R.version.string, pks = as.character(packageVersion("pks")),
                            kstMatrix = if (km) as.character(packageVersion("kstMatrix")) else NA))
for (i in seq_len(nrow(jobs))) {
  K <- as.matrix(read.csv(jobs$K[i], check.names = FALSE)); storage.mode(K) <- "integer"
  rec <- list()
  f <- best(list(getKFringe(K, outer = FALSE), getKFringe(K)))
  rec$fringes_s <- f$t; rec$fringe_cells <- sum(f$value[[1]]) + sum(f$value[[2]])
  rec$forward_graded_s <- best(is.forward.graded(K))$t
  if (km) {
    s <- K; class(s) <- c("kmstructure", "kmfamset", "matrix")
    b <- best(kstMatrix::kmbasis(s)); rec$basis_s <- b$t; rec$basis_size <- nrow(b$value)
    r <- best(kstMatrix::kmsurmiserelation(s)); rec$relation_s <- r$t; rec$relation_pairs <- sum(r$value)
  }
  out[[jobs$key[i]]] <- rec
}
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), args[2])
