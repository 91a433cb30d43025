"""``kstp explore``: a local web explorer of the graph, on either engine, read-only.

Pages (:mod:`kstp.explore.pages`, the run, sample and two-run diff pages in :mod:`kstp.explore.runs`, the
question page in :mod:`kstp.explore.questions`, the comparison of two learners in :mod:`kstp.explore.compare`) gather
what a page shows from the same functions and registered queries the commands use, ids and
cells made page-ready by :mod:`kstp.explore.values`; :mod:`kstp.explore.app` renders them with Jinja2
under Starlette, :mod:`kstp.explore.server` serves them with uvicorn, and
:mod:`kstp.explore.export` writes them as a static site. Graphs are laid out on the server
(:mod:`kstp.explore.layout`) and drawn as nodes and edge paths (:mod:`kstp.explore.drawings`);
ad-hoc Cypher is checked by :mod:`kstp.explore.readonly`.
Importing this package loads none of them.
"""
