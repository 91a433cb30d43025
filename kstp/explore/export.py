"""``kstp explore --export DIR``: every page of the explorer as files, a static site that opens from disk.

The pages are the server's (:mod:`kstp.explore.app`), rendered once with their default view
(depth, first filter) and every table whole (no pager: there is no server to ask for the
next page); links are relative, so the folder can be zipped, served by any web server or
opened with a browser from disk, as ``inspect view bundle`` makes of an Inspect log.
Forms that need a server (depth, sorting, filters, queries) are left out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

from kstp.errors import ConfigError, KstpError
from kstp.explore.app import environment, render
from kstp.explore.compare import compare_path
from kstp.explore.pages import FILTERS, SORTABLE, Explorer, slug

__all__ = ["export_site"]

#: Rows that stand for "the whole table" in the export.
_WHOLE = 10**9
#: Learner pages whose rows are read together (:meth:`~kstp.explore.learners.LearnerPages.read_learners`).
LEARNER_BATCH = 500


def _pages(explorer: Explorer) -> Iterator[tuple[str, str, Callable[[], dict]]]:
    """(file, template, context) of every page, overview first; a file with no template (the CSVs of the PSR
    scatter and of the pictures whose tables a page cuts) is written as its context returns it."""
    overview = explorer.overview()
    yield "index.html", "overview.html", lambda: {"page": overview}
    yield "query.html", "query.html", lambda: {"queries": explorer.queries(), "cypher": "", "result": None,
                                               "error": None}
    for framework in overview["frameworks"]:
        fid = framework["framework"]
        yield f"framework/{slug(fid)}.html", "framework.html", lambda fid=fid: {"page": explorer.framework(fid)}
        concepts = explorer.store.frame("framework_concepts", {"framework": fid})["conceptId"]
        for cid in concepts:
            yield f"concept/{slug(cid)}.html", "concept.html", lambda cid=cid: {"page": explorer.concept(cid)}
    learners: set[str] = set()
    for dataset in overview["datasets"]:
        did = dataset["datasetId"]
        yield (f"dataset/{slug(did)}.html", "dataset.html",
               lambda did=did: {"page": explorer.dataset(did, size=_WHOLE, qsize=_WHOLE), "sortable": SORTABLE})
        if dataset["answers"]:
            yield f"psr/{slug(did)}.html", "psr.html", lambda did=did: {"page": {"dataset": did,
                                                                                 "psr": explorer.psr(did)}}
            yield f"psr/{slug(did)}.csv", None, lambda did=did: explorer.psr_csv(did)
            if explorer.psr(did)["questions"] is not None:  # the dataset and PSR pages link it
                yield (f"psr-questions/{slug(did)}.csv", None,
                       lambda did=did: explorer.picture_csv("psr-questions", did))
        for qid in explorer.store.frame("dataset_questions", {"dataset": did})["questionId"]:
            yield f"question/{slug(qid)}.html", "question.html", lambda qid=qid: {"page": explorer.question(qid)}
        figures = explorer.learner_figures(did)
        learners.update(figures["learnerId"])
        models = sorted(figures.loc[figures["kind"] == "model", "learnerId"])
        for a, b in ((a, b) for a in models for b in models if a < b):  # the pairs of models a learner page links
            yield compare_path(a, b), "compare.html", lambda a=a, b=b: {"page": explorer.compare(a, b)}
    ordered = sorted(learners)
    for at in range(0, len(ordered), LEARNER_BATCH):
        batch = ordered[at:at + LEARNER_BATCH]
        explorer.read_learners(batch)  # three reads for the batch, not three a page
        for lid in batch:
            yield f"learner/{slug(lid)}.html", "learner.html", lambda lid=lid: {"page": explorer.learner(lid)}
    for run in overview["runs"]:
        rid = run["runId"]
        page = explorer.run(rid, size=_WHOLE)
        yield f"run/{slug(rid)}.html", "run.html", lambda page=page: {"page": page, "filters": FILTERS}
        for other in page["others"]:  # the two-run diff pages the run page links
            oid = other["id"]
            yield (f"diff/{slug(rid)}/{slug(oid)}.html", "diff.html",
                   lambda rid=rid, oid=oid: {"page": explorer.diff(rid, oid)})
        if page["pictures"]["strip"] is not None:
            yield f"run-strip/{slug(rid)}.csv", None, lambda rid=rid: explorer.picture_csv("run-strip", rid)
        for sample in page["samples"]["rows"]:
            sid = sample["responseId"]
            yield f"sample/{slug(sid)}.html", "sample.html", lambda sid=sid: {"page": explorer.sample(sid)}


def export_site(explorer: Explorer, folder: str | Path, progress: Callable[[int, str], None] | None = None) -> dict:
    """Write every page of ``explorer``'s graph under ``folder`` with the static files beside them.

    Parameters
    ----------
    explorer : Explorer
        The pages of a graph opened read-only.
    folder : str or pathlib.Path
        Created if missing; pages already there are overwritten, other files left alone.
        The site is written to a hidden folder beside it first and moved in once whole, so
        an export that stops (Ctrl-C, a full disk, an error) leaves ``folder`` as it was
        (a new folder is renamed into place at once; into an existing one the pages are
        moved one by one at the end, a second or so).
    progress : callable, optional
        Called as ``progress(pages_written, file)`` after each page.

    Returns
    -------
    dict
        ``folder`` (absolute), ``pages`` (how many), ``index`` (the path of ``index.html``) and
        ``skipped`` (``[file, reason]`` of pages that could not be drawn: an id the graph lost meanwhile).

    Raises
    ------
    ConfigError
        When ``folder`` is a file, or its parent folder cannot be written.
    """
    root = Path(folder).resolve()
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root} is a file, not a folder; give --export a folder")
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{root.name[:100]}.partial-", dir=root.parent))
    except OSError as exc:
        raise ConfigError(f"cannot write the site to {root}: {exc.strerror}") from None
    mask = os.umask(0)
    os.umask(mask)
    building.chmod(0o777 & ~mask)  # mkdtemp's folder is private (0700); the site is for a web server too
    try:
        written, skipped = _write_site(explorer, building, progress)
        _move_in(building, root)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return {"folder": str(root), "pages": written, "index": str(root / "index.html"), "skipped": skipped}


def _move_in(building: Path, root: Path) -> None:
    """The finished site at ``root``: renamed there whole when ``root`` is new, else file by file."""
    if not root.exists():
        building.rename(root)
        return
    for path in sorted(building.rglob("*")):
        if path.is_file():
            destination = root / path.relative_to(building)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, destination)


def _write_site(explorer: Explorer, root: Path, progress: Callable[[int, str], None] | None) -> tuple[int, list]:
    target = root / "static"
    target.mkdir(exist_ok=True)
    static = resources.files("kstp.explore").joinpath("static")
    for entry in static.iterdir():
        if entry.is_file() and not entry.name.startswith("."):
            with resources.as_file(entry) as source:
                shutil.copyfile(source, target / entry.name)
    env = environment()
    written, skipped, seen = 0, [], set()
    for name, template, context in _pages(explorer):
        if name in seen:
            continue
        seen.add(name)
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            html = context() if template is None else render(env, template, "../" * name.count("/"), True,
                                                             **context())  # None: a file as it is (a CSV)
        except KstpError as exc:
            skipped.append([name, str(exc)])
            continue
        path.write_text(html, encoding="utf-8")
        written += template is not None  # pages; a CSV beside its page is not one
        if progress:
            progress(written, name)
    return written, skipped
