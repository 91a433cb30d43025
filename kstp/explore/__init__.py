"""``kstp explore``: a local web explorer of the graph, on either engine, read-only.

Pages (:mod:`kstp.explore.pages`) gather what a page shows from the same functions and
registered queries the commands use; :mod:`kstp.explore.app` renders them with Jinja2
under Starlette, :mod:`kstp.explore.server` serves them with uvicorn, and
:mod:`kstp.explore.export` writes them as a static site. Graphs are drawn on the server
(:mod:`kstp.explore.layout`); ad-hoc Cypher is checked by :mod:`kstp.explore.readonly`.
Importing this package loads none of them.
"""
