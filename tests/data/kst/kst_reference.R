## Reference values for kstp's structure analysis, kstIO files, BLIM on structures of any kind,
## and IITA's selection set (issue 34), from R's pks, kst, kstMatrix, kstIO and DAKS on the
## example structures pks ships. Run from the repository root:
##   R_LIBS=<library with the packages> Rscript tests/data/kst/kst_reference.R tests/data/kst
## Writes kst_reference.json, blim_structures.json, daks_iita.json and the kstIO files in kstio/.
args <- commandArgs(trailingOnly = TRUE)
out_dir <- args[1]
suppressMessages({library(pks); library(kst); library(kstMatrix); library(kstIO); library(DAKS)
                  library(sets); library(relations); library(jsonlite)})
data(endm); data(DoignonFalmagne7); data(chess); data(Taagepera)
structures <- list(endm_K = endm$K, endm_K2 = endm$K2, DoignonFalmagne7 = DoignonFalmagne7$K,
                   chess_dst1 = chess$dst1, chess_dst3 = chess$dst3, chess_dst4 = chess$dst4,
                   density97 = density97$K, matter97 = matter97$K)
patterns <- function(K) unname(apply(K, 1, paste, collapse = ""))
setpattern <- function(s, items) paste(as.integer(items %in% unlist(as.list(s))), collapse = "")

out <- list()
for (name in names(structures)) {
  K <- structures[[name]]
  storage.mode(K) <- "integer"
  items <- colnames(K)
  ## kst's katoms matches item names by grep, so "s" would match "gs" (chess): kst gets letters a, b, ...
  L <- K; colnames(L) <- letters[seq_along(items)]
  ks <- kstructure(as.pattern(L, as.set = TRUE))
  is_space <- kstructure_is_kspace(ks)
  atoms <- katoms(ks, as.set(colnames(L)))
  rec <- list(items = items, states = patterns(K),
              forward_graded = unname(is.forward.graded(K)), backward_graded = unname(is.backward.graded(K)),
              downgradable = is.downgradable(K),
              inner_fringe = patterns(getKFringe(K, outer = FALSE)), outer_fringe = patterns(getKFringe(K)),
              is_space = is_space,
              atoms = lapply(setNames(colnames(L), items),
                             function(q) sort(sapply(as.list(atoms[[q]]), setpattern, colnames(L)))),
              relation = unname(relation_incidence(as.relation(ks))[colnames(L), colnames(L)]),
              relation_kstMatrix = unname(kmsurmiserelation(structure(K, class = c("kmfamset", "matrix")))))
  if (is_space) rec$base <- sort(sapply(as.list(kbase(ks)), setpattern, colnames(L)))
  if (nrow(K) <= 20) {  # the packages list every path: chess has too many
    km <- structure(K, class = c("kmstructure", "kmfamset", "matrix"))
    rec$learning_paths_kstMatrix <- length(kmlearningpaths(km))
    rec$learning_paths_kst <- length(lpath(ks))
  }
  out[[name]] <- rec
  cat(name, nrow(K), "states, space:", is_space, "\n")
}
## Gradations between two states of DoignonFalmagne7 (kstMatrix::kmgradations): {a} to Q.
km <- structure(DoignonFalmagne7$K, class = c("kmstructure", "kmfamset", "matrix"))
g <- kmgradations(km, from = c(1, 0, 0, 0, 0), to = c(1, 1, 1, 1, 1))
out$DoignonFalmagne7_gradations_a_to_Q <- lapply(g, function(p) sapply(p, paste, collapse = ""))
out$versions <- list(R = R.version.string, pks = as.character(packageVersion("pks")),
                     kst = as.character(packageVersion("kst")), kstMatrix = as.character(packageVersion("kstMatrix")),
                     kstIO = as.character(packageVersion("kstIO")), DAKS = as.character(packageVersion("DAKS")))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), file.path(out_dir, "kst_reference.json"))

## BLIM on structures that are spaces and that are not (pks::blim, its defaults), with residuals.
fit_record <- function(m, K) {
  list(states = patterns(K), P_K = unname(m$P.K), beta = unname(m$beta), eta = unname(m$eta), iter = m$iter,
       loglik = m$loglik, G2 = unname(m$goodness.of.fit["G2"]), df = unname(m$goodness.of.fit["df"]),
       pval = unname(m$goodness.of.fit["pval"]), npar = m$npar, AIC = AIC(m), BIC = BIC(m),
       discrepancy = m$discrepancy, nerror = unname(m$nerror),
       residual_patterns = names(m$N.R)[m$N.R > 0], residuals_deviance = unname(residuals(m))[m$N.R > 0],
       residuals_pearson = unname(residuals(m, type = "pearson"))[m$N.R > 0],
       fitted = unname(m$fitted.values)[m$N.R > 0])
}
blims <- list()
for (case in list(list("endm_K", endm$K, endm$N.R), list("endm_K2", endm$K2, endm$N.R),
                  list("DoignonFalmagne7", DoignonFalmagne7$K, DoignonFalmagne7$N.R),
                  list("chess_dst3", chess$dst3, chess$N.R))) {
  for (method in c("ML", "MD", "MDML")) {
    m <- blim(case[[2]], case[[3]], method = method)
    blims[[paste(case[[1]], method, sep = "/")]] <- fit_record(m, case[[2]])
  }
}
blims$versions <- out$versions
writeLines(toJSON(blims, auto_unbox = TRUE, digits = NA), file.path(out_dir, "blim_structures.json"))

## DAKS's IITA selection set: every candidate quasi-order with its diff, each variant.
daks <- list()
for (case in list(list("endm", as.binmat(endm$N.R, uniq = FALSE)),
                  list("DoignonFalmagne7", as.binmat(DoignonFalmagne7$N.R, uniq = FALSE)))) {
  R <- case[[2]]
  A <- ind_gen(ob_counter(R))
  for (v in 1:3) {
    ii <- iita(R, v)
    every <- list(DAKS:::mini_iita, DAKS:::corr_iita, DAKS:::orig_iita)[[v]](R, A)  # each candidate's error rate
    daks[[paste(case[[1]], v, sep = "/")]] <- list(
      diff = unname(ii$diff), error_rate = unname(ii$error.rate), error_rates = unname(every[[2]]),
      selection = ii$selection.set.index,
      candidates = lapply(A, function(a) t(sapply(as.list(a), function(p) as.integer(unlist(p))))),
      implications = t(sapply(as.list(ii$implications), function(p) as.integer(unlist(p)))))
  }
}
daks$versions <- out$versions
writeLines(toJSON(daks, auto_unbox = TRUE, digits = NA), file.path(out_dir, "daks_iita.json"))

## kstIO's files, written by kstIO itself, for kstp's readers and writers to match byte for byte.
io <- file.path(out_dir, "kstio")
dir.create(io, showWarnings = FALSE)
write_kstructure(endm$K, file.path(io, "endm.kst"))
write_kstructure(endm$K, file.path(io, "endm_kst.kst"), format = "KST")
write_kstructure(endm$K, file.path(io, "endm_matrix.kst"), format = "matrix")
write_kstructure(endm$K, file.path(io, "endm_K.csv"), format = "CSV")
write_kdata(as.binmat(endm$N.R, uniq = FALSE), file.path(io, "endm.dat"))
ksp <- kspace(kstructure(as.pattern(DoignonFalmagne7$K, as.set = TRUE)))
write_kspace(ksp, file.path(io, "DoignonFalmagne7.spc"))
write_kbase(kbase(ksp), file.path(io, "DoignonFalmagne7.bsr"))
write_kbase(kbase(ksp), file.path(io, "DoignonFalmagne7_kst.bsr"), format = "KST")
write_surmiserelation(as.relation(ksp), file.path(io, "DoignonFalmagne7.spr"))
write_surmiserelation(relation_incidence(as.relation(ksp)), file.path(io, "DoignonFalmagne7_matrix.spr"),
                      format = "matrix")
write_kdata(as.binmat(DoignonFalmagne7$N.R, uniq = FALSE), file.path(io, "DoignonFalmagne7.dat"))
write_kdata(as.binmat(DoignonFalmagne7$N.R, uniq = FALSE), file.path(io, "DoignonFalmagne7_data.csv"),
            format = "CSV")
write_kstructure(chess$dst3, file.path(io, "chess_dst3.kst"))
write_kdata(chess$R, file.path(io, "chess.dat"))
