## Reference values for issue 48: BLIM identifiability (pks's jacobian and blimit), the EM's iteration
## counts on chess DST1 and a fit stopped at maxiter. Run from the repository root:
##   R_LIBS=<library with pks> Rscript tests/data/kst/blim_identify.R tests/data/kst
## Writes blim_identify.json.
args <- commandArgs(trailingOnly = TRUE)
out_dir <- args[1]
suppressMessages({library(pks); library(jsonlite)})
data(endm); data(DoignonFalmagne7); data(chess)
patterns <- function(K) unname(apply(K, 1, paste, collapse = ""))
out <- list(versions = list(R = R.version.string, pks = as.character(packageVersion("pks"))))

## Jacobian of the map (pi without the last state, beta, eta) -> P(R) for every pattern but 1...1
## (pks::jacobian), and blimit's rank analysis, at fixed parameter values (blimit draws them at
## random when none are given). The last state of each structure is Q, as pks::jacobian assumes.
hand <- matrix(c(0,0,0, 1,0,0, 1,1,0, 1,0,1, 1,1,1), ncol = 3, byrow = TRUE,
               dimnames = list(NULL, c("a", "b", "c")))
structures <- list(hand = hand, endm_K = endm$K, DoignonFalmagne7 = DoignonFalmagne7$K)
for (name in names(structures)) {
  K <- structures[[name]]
  storage.mode(K) <- "integer"
  n <- ncol(K); s <- nrow(K)
  beta <- round(seq(0.05, 0.3, length.out = n), 4)
  eta <- round(seq(0.25, 0.1, length.out = n), 4)
  P.K <- seq_len(s) / sum(seq_len(s))
  J <- jacobian(list(K = K), P.K = P.K, beta = beta, eta = eta)
  info <- invisible(capture.output(b <- blimit(K, beta = beta, eta = eta, pi = P.K)))
  out[[name]] <- list(items = colnames(K), states = patterns(K), beta = beta, eta = eta, P_K = P.K,
                      jacobian = unname(J), jacobian_patterns = rownames(J), jacobian_columns = colnames(J),
                      rank = b$Rank, npar = b$NPar, nsd = b$NSD,
                      rank_beta_pi = if (is.null(b$RankBetaPi)) NULL else b$RankBetaPi,
                      rank_eta_pi = if (is.null(b$RankEtaPi)) NULL else b$RankEtaPi)
  cat(name, "rank", b$Rank, "of", b$NPar, "\n")
}

## chess DST3 (16 items, 232 states): the rank of pks's Jacobian (R's qr, as blimit takes it; blimit's
## trade-off analysis runs for hours on its 65,535 rows).
K <- chess$dst3; storage.mode(K) <- "integer"
J <- jacobian(list(K = K), P.K = seq_len(232) / sum(seq_len(232)), beta = seq(0.05, 0.3, length.out = 16),
              eta = seq(0.25, 0.1, length.out = 16))
out$chess_dst3 <- list(rank = qr(J)$rank, npar = ncol(J))
cat("chess_dst3 rank", out$chess_dst3$rank, "of", ncol(J), "\n")

## chess DST1 (pks's data): iterations of each method on the 92 learners (chess$N.R).
out$chess_dst1 <- list(states = patterns(chess$dst1), items = colnames(chess$dst1))
for (m in c("ML", "MD", "MDML")) {
  f <- blim(chess$dst1, chess$N.R, m)
  out$chess_dst1[[m]] <- list(iter = f$iter, P_K = unname(f$P.K), beta = unname(f$beta), eta = unname(f$eta),
                              loglik = f$loglik)
}

## A fit stopped at maxiter: pks warns and returns the estimates of the last step.
warned <- NULL
f <- withCallingHandlers(blim(endm$K, endm$N.R, "ML", maxiter = 5),
                         warning = function(w) {warned <<- conditionMessage(w); invokeRestart("muffleWarning")})
out$endm_K_ML_maxiter5 <- list(iter = f$iter, P_K = unname(f$P.K), beta = unname(f$beta), eta = unname(f$eta),
                               warning = warned)
## The simple learning model (pks::slm) on DoignonFalmagne7 (a learning space), each method.
out$slm_DoignonFalmagne7 <- list(states = patterns(DoignonFalmagne7$K))
for (m in c("ML", "MD", "MDML")) {
  f <- slm(DoignonFalmagne7$K, DoignonFalmagne7$N.R, m)
  out$slm_DoignonFalmagne7[[m]] <- list(iter = f$iter, g = unname(f$g), P_K = unname(f$P.K), beta = unname(f$beta),
                                        eta = unname(f$eta), loglik = f$loglik,
                                        G2 = unname(f$goodness.of.fit["G2"]), df = unname(f$goodness.of.fit["df"]),
                                        npar = f$npar, discrepancy = f$discrepancy)
}
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), file.path(out_dir, "blim_identify.json"))
