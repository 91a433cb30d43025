"""The web application of ``kstp explore``: Starlette routes that render the pages with Jinja2.

Every page has a stable address that is also its file in the static export
(``dataset/frcsub.html``; ids as :func:`~kstp.explore.pages.slug` s), and every link is
relative, so the same templates serve both. Jinja2 escapes every value it prints (ids,
question texts, model completions, query results): nothing from the graph or the user
becomes markup. Each response carries a ``Server-Timing`` header with the milliseconds
the page took on the server. The browser code is the package's own ``static/explore.js``
(filtering, sorting shown tables, the fringes of a hovered state): nothing is fetched
from the internet.
"""

from __future__ import annotations

import asyncio
import csv
import functools
import io
import json
import math
import threading
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kstp._version import __version__
from kstp.csvcells import neutralise
from kstp.errors import KstpError, QueryError, ReadOnlyError, UnknownIdError
from kstp.explore.charts import svg_marks
from kstp.explore.pages import FILTERS, PAGE_SIZE, PICTURE_CSVS, SORTABLE, Explorer, slug, unslug

__all__ = ["create_app", "environment", "render", "off_loop", "abandon"]


def _number(value: Any, digits: int = 3) -> str:
    """A figure as the page shows it: floats to ``digits`` decimals, or two significant digits where those
    decimals would read 0 (a p-value of 2e-19 is not 0.000); integers, and floats with ``digits`` 0 (counts a
    pandas column with a gap holds as floats), with thousands separators; - for none.

    >>> _number(0.53412), _number(12345), _number(None), _number(float("nan")), _number(2.1e-19), _number(0.0)
    ('0.534', '12,345', '-', '-', '2.1e-19', '0.000')
    >>> _number(4.0, 0), _number(1234.0, 0), _number(-0.00004, 3)
    ('4', '1,234', '-4e-05')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if digits == 0:
            return f"{round(value):,}" if math.isfinite(value) else str(value)
        if value != 0 and abs(value) < 0.5 * 10 ** -digits:
            return f"{value:.2g}"
        return f"{value:.{digits}f}"
    return str(value)


def _chart_svg(chart: dict, root: str = "") -> Markup:
    """A chart's axes and marks as SVG (:func:`~kstp.explore.charts.svg_marks`, escaped there), written once per
    chart and page depth: the pages keep their charts, and a run's strip is 4,118 cells at XES3G5M scale."""
    written = chart.setdefault("_svg", {})
    if root not in written:
        written[root] = Markup(svg_marks(chart["axes"], root) + "\n" + svg_marks(chart["marks"], root))
    return written[root]


def _fault(exc: BaseException) -> str:
    """One line for an error kstp did not foresee (a page is never a traceback).

    >>> _fault(ValueError("Integer value out of bounds"))
    'this page failed: ValueError: Integer value out of bounds (a fault of kstp explore; please report it)'
    """
    return (f"this page failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]} "
            "(a fault of kstp explore; please report it)")


def environment() -> Environment:
    """The templates, with autoescaping on for every one of them."""
    env = Environment(loader=PackageLoader("kstp.explore", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _number
    env.filters["slug"] = slug
    env.filters["json"] = lambda value: json.dumps(value, sort_keys=True, default=str)
    env.filters["short"] = lambda text, n=80: text if text is None or len(str(text)) <= n else str(text)[:n - 1] + "…"
    env.filters["chart_svg"] = _chart_svg
    env.filters["qlinks"] = _question_links
    env.globals["version"] = __version__
    return env


def _question_links(ids: list[str], root: str, names: dict[str, str]) -> Markup:
    """Links to questions, each followed by a space, shown by local name (``names``), or ``-`` for none: the
    question page's relation cells. One filter, not a macro per link: a question of XES3G5M's Eq. 1 relation
    has hundreds of prerequisites and dependants, and a macro call each was half the static export's time."""
    if not ids:
        return Markup("-")
    return Markup("".join([_question_link(root, q, names.get(q, q)) for q in ids]))


@functools.lru_cache(maxsize=1 << 16)
def _question_link(root: str, question: str, name: str) -> str:
    """One link of :func:`_question_links`, made once: an export writes each of XES3G5M's links hundreds of times
    (2.5 M links on 4,118 question pages, two thirds of its time when each was escaped again)."""
    return f'<a href="{escape(root)}question/{escape(slug(question))}.html">{escape(name)}</a> '


def render(env: Environment, template: str, root: str, static: bool, **context: Any) -> str:
    """One page as HTML. ``root`` leads from the page to the site's top (``""`` or ``"../"``); ``static``:
    for the export, where controls that need a server are left out."""
    return env.get_template(template).render(root=root, static=static, **context)


#: The reads :func:`off_loop` awaits now, which :func:`abandon` answers when the server stops.
_PENDING: set[asyncio.Future] = set()


async def off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a daemon thread of its own, awaited: the event loop goes on serving meanwhile.

    A daemon thread, not a pool's: a statement the engine is still running cannot keep the
    process alive after Ctrl-C (:func:`kstp.explore.server.serve` interrupts it, and
    :func:`abandon` answers its request).
    """
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    _PENDING.add(future)
    future.add_done_callback(_PENDING.discard)

    def settle(outcome: Any, failed: bool) -> None:
        if not future.done():  # the request may have been cancelled meanwhile
            future.set_exception(outcome) if failed else future.set_result(outcome)

    def work() -> None:
        try:
            outcome, failed = function(*args), False
        except BaseException as exc:  # noqa: BLE001 (handed to the awaiting request as it is)
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the server stopped and its loop closed meanwhile: nobody waits for this page
            pass

    threading.Thread(target=work, name="kstp-explore-page", daemon=True).start()
    return await future


def abandon() -> None:
    """Answer every request still waiting on a read with "the explorer is stopping" (call it on the loop's
    thread: uvicorn's signal handler): the server then stops without waiting for the engine."""
    for future in list(_PENDING):
        if not future.done():
            future.set_exception(KstpError("kstp explore is stopping; this read was left unfinished"))


def create_app(explorer: Explorer) -> Starlette:
    """The ASGI application over ``explorer``'s graph.

    Parameters
    ----------
    explorer : Explorer
        The pages of a graph opened read-only.

    Returns
    -------
    starlette.applications.Starlette
    """
    env = environment()
    for name in env.list_templates():  # compiled now, not on a visitor's first page of each kind
        env.get_template(name)

    def page(template: str, build, depth: int = 1, locked: bool = True):
        def built(request: Request):
            explorer.refresh()  # what another process wrote since the last page
            if not locked:  # the ad-hoc query page: its statement runs outside the lock, under a time limit
                return build(request)
            with explorer.locked():
                return build(request)

        async def endpoint(request: Request) -> Response:
            began = time.perf_counter()
            root = "../" * depth
            try:
                context = await off_loop(built, request)
                if isinstance(context, Response):
                    return context
                html = render(env, template, root, False, read_at=explorer.read_at, **context)
                status = 200
            except UnknownIdError as exc:
                html, status = render(env, "error.html", root, False, message=str(exc), title="Not found"), 404
            except KstpError as exc:
                html, status = render(env, "error.html", root, False, message=str(exc), title="Refused"), 400
            except Exception as exc:  # noqa: BLE001 (a fault of kstp's: one line, never a traceback)
                html, status = render(env, "error.html", root, False, message=_fault(exc), title="Failed"), 500
            elapsed = (time.perf_counter() - began) * 1000
            return HTMLResponse(html, status, headers={"Server-Timing": f"page;dur={elapsed:.1f}"})

        return endpoint

    def ident(request: Request) -> str:
        return unslug(request.path_params["slug"])

    def number(request: Request, name: str, default: int) -> int:
        try:
            return int(request.query_params.get(name, default))
        except ValueError:
            return default

    def overview(request):
        return {"page": explorer.overview()}

    def framework(request):
        return {"page": explorer.framework(ident(request))}

    def concept(request):
        return {"page": explorer.concept(ident(request), max(1, min(number(request, "depth", 2), 50)))}

    def dataset(request):
        sort = request.query_params.get("sort", "learnerId")
        return {"page": explorer.dataset(ident(request), sort if sort in SORTABLE else "learnerId",
                                         request.query_params.get("desc") == "1", number(request, "page", 1),
                                         qpage=number(request, "qpage", 1)),
                "sortable": SORTABLE}

    def psr(request):
        dataset_id = ident(request)
        return {"page": {"dataset": dataset_id, "psr": explorer.psr(dataset_id)}}

    def learner(request):
        return {"page": explorer.learner(ident(request))}

    def compare(request):
        return {"page": explorer.compare(unslug(request.path_params["a"]), unslug(request.path_params["b"]))}

    async def compare_form(request: Request) -> Response:
        a, b = (request.query_params.get(k, "").strip() for k in ("a", "b"))
        if not a or not b:
            return HTMLResponse(render(env, "error.html", "", False, title="Refused", message=(
                "give two learner ids to compare (the learner page's form fills in the first)")), 400)
        return RedirectResponse(f"compare/{slug(a)}/{slug(b)}.html")

    def run(request):
        return {"page": explorer.run(ident(request), request.query_params.get("show", "all"),
                                     number(request, "page", 1)), "filters": FILTERS}

    def sample(request):
        return {"page": explorer.sample(ident(request))}

    def question(request):
        return {"page": explorer.question(ident(request))}

    def diff(request):
        return {"page": explorer.diff(unslug(request.path_params["a"]), unslug(request.path_params["b"]))}

    def queries(request):
        text = request.query_params.get("cypher")
        result, error = None, None
        if text is not None:
            try:
                result = explorer.cypher(text)
            except (ReadOnlyError, QueryError) as exc:
                error = str(exc)
        return {"queries": explorer.queries(), "cypher": text or "", "result": result, "error": error}

    def query(request):
        name = ident(request)
        given = {k: v for k, v in request.query_params.items() if k != "run"}
        ran = request.query_params.get("run") == "1"
        try:
            return {"page": explorer.query(name, given if ran else {}), "error": None}
        except QueryError as exc:
            from kstp.graph.queries import get_query

            spec = get_query(name)
            return {"page": {"query": spec, "given": given, "rows": None, "columns": list(spec.returns)},
                    "error": str(exc)}

    async def query_csv(request: Request) -> Response:
        name = unslug(request.path_params["slug"])
        given = dict(request.query_params)
        try:
            await off_loop(explorer.refresh)
            result = await off_loop(explorer.query, name, given)  # beside the pages, under the time limit
        except KstpError as exc:
            return Response(f"Error: {exc}\n", 400, media_type="text/plain")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([neutralise(c) for c in result["columns"]])
        for row in result["rows"] or []:  # text neutralised against spreadsheet formulas, anything else as JSON
            writer.writerow([v if v is None else neutralise(v) if isinstance(v, str) else json.dumps(v)
                             for v in (row.get(c) for c in result["columns"])])
        return Response(out.getvalue(), media_type="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{slug(name)}.csv"'})

    def csv_endpoint(make: Callable[[str], str], filename: Callable[[str], str]
                     ) -> Callable[[Request], Awaitable[Response]]:
        """A CSV download of the id in the path: ``make(id)``'s text, saved as ``filename(id)``."""
        async def endpoint(request: Request) -> Response:
            began = time.perf_counter()
            ident = unslug(request.path_params["slug"])

            def built():
                explorer.refresh()
                with explorer.locked():
                    return make(ident)
            try:
                text = await off_loop(built)
            except KstpError as exc:
                return Response(f"Error: {exc}\n", 404 if isinstance(exc, UnknownIdError) else 400,
                                media_type="text/plain")
            return Response(text, media_type="text/csv",
                            headers={"Content-Disposition": f'attachment; filename="{filename(ident)}"',
                                     "Server-Timing": f"page;dur={(time.perf_counter() - began) * 1000:.1f}"})

        return endpoint

    psr_csv = csv_endpoint(explorer.psr_csv, lambda dataset: f"psr_learners_{slug(dataset)}.csv")

    def picture_csv(kind: str) -> Callable[[Request], Awaitable[Response]]:
        return csv_endpoint(lambda ident: explorer.picture_csv(kind, ident), lambda ident: f"{kind}_{slug(ident)}.csv")

    async def index_redirect(request: Request) -> Response:
        return RedirectResponse("index.html")

    static = StaticFiles(directory=str(resources.files("kstp.explore").joinpath("static")))
    routes = [
        Route("/", index_redirect),
        Route("/index.html", page("overview.html", overview, 0)),
        Route("/query.html", page("query.html", queries, 0, locked=False)),
        Route("/framework/{slug}.html", page("framework.html", framework)),
        Route("/concept/{slug}.html", page("concept.html", concept)),
        Route("/dataset/{slug}.html", page("dataset.html", dataset)),
        Route("/psr/{slug}.html", page("psr.html", psr)),
        Route("/psr/{slug}.csv", psr_csv),
        Route("/learner/{slug}.html", page("learner.html", learner)),
        Route("/compare.html", compare_form),
        Route("/compare/{a}/{b}.html", page("compare.html", compare, 2)),
        Route("/run/{slug}.html", page("run.html", run)),
        Route("/sample/{slug}.html", page("sample.html", sample)),
        Route("/question/{slug}.html", page("question.html", question)),
        Route("/diff/{a}/{b}.html", page("diff.html", diff, 2)),
        Route("/query/{slug}.html", page("query_one.html", query, locked=False)),
        Route("/query/{slug}.csv", query_csv),
        *(Route(f"/{kind}/{{slug}}.csv", picture_csv(kind)) for kind in PICTURE_CSVS),
        Mount("/static", app=static, name="static"),
    ]
    # pages of hundreds of kilobytes (a dataset's learners, a run's samples) travel compressed: about a tenth
    app = Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=1024)])
    app.state.page_size = PAGE_SIZE
    return app
