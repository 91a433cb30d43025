## Reference values for issue 48's surmise functions, validation indices and likelihood-ratio
## tests, from R's kstMatrix, kstIO, kst and pks on the example data they ship. Run from the
## repository root:
##   R_LIBS=<library with the packages> Rscript tests/data/kst/surmise_validate.R tests/data/kst
## Writes surmise_validate.json and the surmise-function files kstio/<name>_sf.csv.
args <- commandArgs(trailingOnly = TRUE)
out_dir <- args[1]
suppressMessages({library(pks); library(kst); library(kstMatrix); library(kstIO); library(DAKS); library(sets)
                  library(relations); library(jsonlite)})
data(DoignonFalmagne7); data(chess); data(endm)
patterns <- function(K) unname(apply(K, 1, paste, collapse = ""))
out <- list(versions = list(R = R.version.string, pks = as.character(packageVersion("pks")),
                            kst = as.character(packageVersion("kst")),
                            kstMatrix = as.character(packageVersion("kstMatrix")),
                            kstIO = as.character(packageVersion("kstIO")),
                            DAKS = as.character(packageVersion("DAKS"))))
xspace <- unclass(xpl$space); xdata <- unclass(xpl$data)
storage.mode(xspace) <- "integer"; storage.mode(xdata) <- "integer"
spaces <- list(xpl = xspace, DoignonFalmagne7 = DoignonFalmagne7$K, chess_dst1 = chess$dst1)

## Surmise functions: kstMatrix's kmsurmisefunction, written by kstIO's write_surmisefunction (it
## takes a matrix: the data frame as.matrix), read back by read_surmisefunction, and kmSF2basis.
for (name in names(spaces)) {
  K <- spaces[[name]]; storage.mode(K) <- "integer"
  sf <- kmsurmisefunction(structure(K, class = c("kmspace", "kmstructure", "kmfamset", "matrix")))
  file <- file.path(out_dir, "kstio", paste0(name, "_sf.csv"))
  write_surmisefunction(as.matrix(sf), file)
  back <- read_surmisefunction(file)
  b <- kmSF2basis(back)
  out[[paste0("sf_", name)]] <- list(items = colnames(K), states = patterns(K), clause_items = sf$Item,
                                     clauses = patterns(as.matrix(sf[, -1])), basis = patterns(b))
  cat(name, nrow(sf), "clauses,", nrow(b), "basis elements\n")
}

## Validation indices: kst's kvalidate (gamma, VC, DI, DA; its items renamed a, b, ... since kst
## matches names by grep) and kstMatrix's kmvalidate (distance distribution, DI, DA).
data_of <- function(N.R) { R <- as.binmat(N.R, uniq = FALSE); storage.mode(R) <- "integer"; R }
pairs <- list(xpl = list(K = xspace, R = xdata),
              DoignonFalmagne7 = list(K = DoignonFalmagne7$K, R = data_of(DoignonFalmagne7$N.R)),
              endm_K = list(K = endm$K, R = data_of(endm$N.R)),
              chess_dst1 = list(K = chess$dst1, R = data_of(chess$N.R)))
for (name in names(pairs)) {
  K <- pairs[[name]]$K; R <- pairs[[name]]$R; storage.mode(K) <- "integer"
  L <- K; colnames(L) <- letters[seq_len(ncol(K))]
  RL <- R; colnames(RL) <- colnames(L)
  ks <- kstructure(as.pattern(L, as.set = TRUE))
  g <- kvalidate(ks, RL, "gamma"); v <- kvalidate(ks, RL, "VC"); d <- kvalidate(ks, RL, "DI")
  a <- kvalidate(ks, RL, "DA")
  m <- kmvalidate(R, K)
  out[[paste0("validate_", name)]] <- list(
    items = colnames(K), states = patterns(K), data = patterns(R),
    gamma = g$gamma, nc = g$nc, nd = g$nd, vc = v$vc, vc_nd = v$nd, di = d$di,
    di_dist = as.list(d$di_dist), da = a$DA, ddat = a$ddat, dpot = a$dpot,
    km_dist = as.list(m$dist), km_DI = m$DI, km_DA = m$DA)
  cat(name, "gamma", g$gamma, "VC", v$vc, "DI", d$di, "DA", a$DA, "\n")
}

## pks's anova.blim: nested BLIMs of DoignonFalmagne7, every rate equal < one eta per item < all free,
## and the SLM against the BLIM (anova for slm objects is the same table).
K <- DoignonFalmagne7$K; N.R <- DoignonFalmagne7$N.R; n <- ncol(K)
m_eq <- blim(K, N.R, "ML", betaequal = list(1:n), etaequal = list(1:n))
m_beq <- blim(K, N.R, "ML", betaequal = list(1:n))
m_free <- blim(K, N.R, "ML")
tab <- anova(m_eq, m_beq, m_free)
out$anova_DoignonFalmagne7 <- list(resid_df = unname(tab[, 1]), resid_dev = unname(tab[, 2]),
                                   df = unname(tab[, 3]), deviance = unname(tab[, 4]),
                                   p = unname(tab[, 5]))
print(tab)
## The SLM within the BLIM (a learning space), as anova(slm, blim), by ML and by MD (pks's default).
for (method in c("ML", "MD")) {
  tab <- anova(slm(K, N.R, method), blim(K, N.R, method))
  out[[paste0("anova_slm_blim_", method)]] <- list(resid_df = unname(tab[, 1]), resid_dev = unname(tab[, 2]),
                                                   df = unname(tab[, 3]), deviance = unname(tab[, 4]),
                                                   p = unname(tab[, 5]))
}
## kstIO's order of a space's states and a base's elements (write_kspace, write_kbase of kst objects):
## three seeded random spaces on 7 items, their states also written shuffled as a CSV (the input).
set.seed(1)
for (i in 1:3) {
  B <- matrix(rbinom(6 * 7, 1, 0.4), 6, 7); B <- B[rowSums(B) > 0, , drop = FALSE]; colnames(B) <- letters[1:7]
  ksp <- kspace(kstructure(as.pattern(B, as.set = TRUE)))
  write_kbase(kbase(ksp), file.path(out_dir, "kstio", sprintf("order%d.bsr", i)))
  write_kspace(ksp, file.path(out_dir, "kstio", sprintf("order%d.spc", i)))
  S <- as.binmat(ksp)
  write.csv(S[sample(nrow(S)), ], file.path(out_dir, "kstio", sprintf("order%d_shuffled.csv", i)), row.names = FALSE)
}

## DAKS's z_test on DoignonFalmagne7's patterns: the relation iita selects (v = 1, 2), and the second
## against the third relation of ind_gen's selection set. Implications as (i, j) pairs: i is a
## prerequisite of j.
R <- as.binmat(DoignonFalmagne7$N.R, uniq = FALSE)
pairs_of <- function(imp) lapply(as.list(imp), function(t) as.integer(unlist(as.list(t))))
sel <- ind_gen(ob_counter(R))
for (v in 1:2) {
  imp <- iita(R, v)$implications
  z <- z_test(R, imp, v = v)
  z2 <- z_test(R, sel[[2]], imp_alt = sel[[3]], v = v)
  out[[paste0("ztest_v", v)]] <- list(
    imp = pairs_of(imp), z = z$Z.value, p = z$p.value, conf = z$conf, diff = z$diff_value,
    imp2 = pairs_of(sel[[2]]), imp3 = pairs_of(sel[[3]]), z_alt = z2$Z.value, p_alt = z2$p.value,
    conf_alt = z2$conf, diff_alt = z2$diff_value)
}

## DAKS's pop_iita: the population IITA of DoignonFalmagne7's v = 1 relation as a BLIM (equally likely
## states of its quasi-ordinal space, careless 0.1 and guess 0.05 on every item), its selection set
## from the population counterexamples, or from the data (dataset = R), for v = 1, 2, 3.
imp <- iita(R, 1)$implications
for (v in 1:3) {
  pop <- pop_iita(imp, 0.1, 0.05, 5, v = v)
  from_data <- pop_iita(imp, 0.1, 0.05, 5, dataset = R, v = v)
  out[[paste0("pop_iita_v", v)]] <- list(
    imp = pairs_of(imp), careless = 0.1, guess = 0.05,
    patterns = patterns(pop$pop.matrix[, 1:5]), probability = unname(pop$pop.matrix[, 6]),
    diff = pop$pop.diff, error = pop$error.pop, selection_set = lapply(pop$selection.set, pairs_of),
    data_diff = from_data$pop.diff, data_error = from_data$error.pop,
    data_selection_set = lapply(from_data$selection.set, pairs_of))
}

write(toJSON(out, auto_unbox = TRUE, digits = NA, null = "null", na = "null", pretty = TRUE),
      file.path(out_dir, "surmise_validate.json"))
