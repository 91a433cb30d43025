## Times pks::blim for benchmarks/blim.py: one row of jobs.csv per structure (K) and
## response matrix (R), each fitted by ML, MD and MDML with pks's defaults.
## Rscript benchmarks/blim_pks.R jobs.csv out.json
args <- commandArgs(trailingOnly = TRUE)
suppressMessages({library(pks); library(jsonlite)})
jobs <- read.csv(args[1], stringsAsFactors = FALSE)
out <- list()
for (i in seq_len(nrow(jobs))) {
  R <- as.matrix(read.csv(jobs$R[i])); K <- as.matrix(read.csv(jobs$K[i]))
  N.R <- as.pattern(R, freq = TRUE)
  for (method in c("ML", "MD", "MDML")) {
    t <- system.time(m <- blim(K, N.R, method = method))[["elapsed"]]
    out[[paste(jobs$key[i], method, sep = "/")]] <- list(seconds = t, G2 = unname(m$goodness.of.fit["G2"]),
                                                         iter = m$iter)
  }
}
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), args[2])
