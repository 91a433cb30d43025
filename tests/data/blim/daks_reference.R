## IITA reference from R DAKS 2.1-3 for kstp's tests: the three variants of iita(dataset, v).
##   Rscript tests/data/blim/daks_reference.R ../shared/data/responses tests/data/blim probability_pks
## DAKS's IITA code needs only sets; its package also needs `relations`, not installable here,
## so its R files are sourced from $DAKS_R (default /tmp/blim-daks/R: `git archive` of the
## cran/DAKS mirror). DAKS's iita(dataset, v) is ind_gen(ob_counter(dataset)) followed by the
## variant's fit; the candidates are generated once here and fed to each variant, which is
## what iita() does three times over. Writes daks_<dataset>.json.
args <- commandArgs(trailingOnly = TRUE)
data_dir <- args[1]; out_dir <- args[2]; dataset <- args[3]
daks_dir <- Sys.getenv("DAKS_R", "/tmp/blim-daks/R")
suppressMessages({library(sets); library(jsonlite)})
for (f in c("ob_counter.r", "ind_gen.r", "orig_iita.r", "corr_iita.r", "mini_iita.r")) source(file.path(daks_dir, f))
files <- c(probability_pks = "responses_full.csv", frcsub = "responses.csv")
R <- as.matrix(read.csv(file.path(data_dir, dataset, files[[dataset]]), row.names = 1))
t0 <- system.time(A <- ind_gen(ob_counter(R)))[["elapsed"]]
cat("ind_gen", length(A), "candidates", t0, "s\n")
out <- list()
for (v in 1:3) {
  fit <- list(mini_iita, corr_iita, orig_iita)[[v]]
  t <- system.time(ii <- fit(R, A))[["elapsed"]]
  best <- which.min(ii[[1]])
  imp <- t(sapply(as.list(A[[best]]), function(p) as.integer(unlist(p))))
  out[[paste(dataset, "iita", v, sep = "/")]] <- list(
    diff = ii[[1]], error_rates = ii[[2]], error_rate = ii[[2]][best], implications = imp, selection = best,
    candidates = length(A), seconds = t + t0)
  cat("variant", v, "selected", best, "s", t, "\n")
}
out$versions <- list(R = R.version.string, sets = as.character(packageVersion("sets")),
                     DAKS = "2.1-3 (R files sourced)")
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), file.path(out_dir, paste0("daks_", dataset, ".json")))
