"""Sphinx configuration: the API reference built from kstp's numpydoc docstrings.

Built offline by ``make docs`` (``sphinx-build -W --keep-going``): no intersphinx, no remote
theme or fonts. The front page (index.rst) is the public namespace ``kstp``; autosummary
generates one page per subpackage and one per module under it (``:recursive:``), so a new
module appears without editing these files.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sphinx.ext import autosummary
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document the working tree, installed or not

from kstp._version import __version__  # noqa: E402

project = "kstp"
author = "kstp contributors"
copyright = "kstp contributors"
release = __version__
version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
]

templates_path = ["_templates"]
exclude_patterns = ["_build"]
# Stubs written by autosummary (front-page names in generated/, subpackages in api/)
# are build products: gitignored and rewritten on every build.
autosummary_generate = True
autosummary_generate_overwrite = True
autosummary_imported_members = False

autodoc_member_order = "bysource"

# Class pages document their members with autodoc (templates); numpydoc's own member
# tables would describe each member a second time.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# A warning-free build, not a style audit.
numpydoc_validation_checks: set[str] = set()

# A summary line ends at the first ". "; the papers' abbreviations are not the end of a
# sentence ("Materialise Eq. 1 for ..." was cut to "Materialise Eq.").
autosummary.WELL_KNOWN_ABBREVIATIONS += ("Eq.", "Eqs.", "Def.", "Th.", "Fig.", "Sec.", "ch.", "cf.")

html_theme = "alabaster"
html_title = f"kstp {__version__} API reference"
html_static_path: list[str] = []
html_show_sourcelink = False


# The front page names every public name: a name in kstp.__all__ missing from index.rst
# is a warning, so -W fails the build until it is placed in its group.
_ENTRY = re.compile(r"^\s{3,}(?:kstp\.)?([A-Za-z_][A-Za-z0-9_]*)\s*$")


def _check_front_page(app) -> None:
    import kstp

    listed = {m.group(1) for line in (Path(app.srcdir) / "index.rst").read_text(encoding="utf-8").splitlines()
              if (m := _ENTRY.match(line))}
    missing = [name for name in kstp.__all__ if name != "__version__" and name not in listed]
    if missing:
        logging.getLogger(__name__).warning(
            "index.rst: names in kstp.__all__ not on the front page: %s", ", ".join(missing))


def setup(app):
    app.connect("builder-inited", _check_front_page)
