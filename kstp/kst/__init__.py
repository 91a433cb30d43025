"""KST mathematics on item sets: knowledge spaces, fringes, the BLIM, ITA and IITA.

numpy only: nothing here knows a graph, a file or a model. Items are the columns of a 0/1
matrix or the elements of a set; the graph floor (:mod:`kstp.graph.structures`) feeds these
functions from the stored relations.
"""
