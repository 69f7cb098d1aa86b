"""mkdocs hook: a docstring's cross-reference to a real but internal name renders as plain text.

The API pages render only the public names and the extension points, while the docstrings they show
link freely to the internal functions they build on. Those links are marked *optional* for autorefs
when the name they point to exists (it imports): they render as code, without a link and without a
warning. A link to a name that does not exist (a typo, a name that moved) still fails the strict build.
"""

import importlib
import re

AUTOREF = re.compile(r'<autoref (?P<attrs>[^>]*?)identifier="(?P<identifier>pgmpy_dp[\w.]*)"(?P<rest>[^>]*)>')


def exists(identifier: str) -> bool:
    """Whether ``identifier`` names a module of the package or an attribute reached from one."""
    parts = identifier.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def mark_internal(match: re.Match) -> str:
    if "optional" in match["attrs"] + match["rest"] or not exists(match["identifier"]):
        return match[0]
    return f'<autoref {match["attrs"]}identifier="{match["identifier"]}"{match["rest"]} optional>'


def on_page_content(html, page, config, files):
    return AUTOREF.sub(mark_internal, html)
