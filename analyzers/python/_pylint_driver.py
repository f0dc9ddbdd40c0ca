"""pylint, with the analysed tree readable by astroid but never importable: ``python -I -B -c <this> ARGS``.

pylint puts the analysed tree first on ``sys.path`` so that astroid resolves the project's own modules, and astroid
then asks the real import system about names like ``<stdlib package>.<sub>`` (``importlib.util.find_spec``
imports the parent package), while pylint and its dependencies import modules lazily during the run.  Any of those
would execute a repository's ``multiprocessing/__init__.py``, ``isort.py`` ... as us.  Here a finder placed just
before the standard path finder answers every real import from the directories that were on ``sys.path`` when the
interpreter started (its standard library and site-packages) and refuses the import (``ImportError``) when only a
directory added later -- the tree, its parents -- holds the module.  astroid's own module search reads files and
is unaffected, so inference over the project is the same; namespace packages (no code) are left alone.

Never imported by benchsmith: its text is the program (``-c``), so nothing but this file is needed on the path.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _real(path):
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


_CWD = _real(os.getcwd())
# absolute entries present at start-up: the interpreter's own installation (-I: no PYTHONPATH, no user site, no
# script directory).  The analysed tree is the working directory and never among them.
_TRUSTED = tuple(sorted({_real(p) for p in sys.path if p and os.path.isabs(p)} - {_CWD}))


def _trusted(path):
    if not path:
        return False
    real = _real(path)
    if real == _CWD or real.startswith(_CWD + os.sep):
        return False
    return any(real == t or real.startswith(t + os.sep) for t in _TRUSTED)


class RepositoryImportGuard(importlib.abc.MetaPathFinder):
    """Resolve real imports only from trusted directories; refuse what only untrusted ones hold."""

    def find_spec(self, name, path=None, target=None):
        search = sys.path if path is None else list(path)
        trusted = [p for p in search if isinstance(p, str) and _trusted(p)]
        spec = importlib.machinery.PathFinder.find_spec(name, trusted, target)
        if spec is not None:
            return spec
        anywhere = importlib.machinery.PathFinder.find_spec(name, [p for p in search if isinstance(p, str)], target)
        if anywhere is None or anywhere.origin is None or anywhere.loader is None:
            return anywhere  # nothing, or a namespace package: no code runs
        raise ImportError(f"benchsmith: refusing to import {name!r} from {anywhere.origin}: analysed code is never "
                          "imported", name=name)


_find_spec = importlib.util.find_spec


def find_spec_without_importing(name, package=None):
    """``importlib.util.find_spec``, except that it never imports a parent package to answer: astroid asks about
    ``<stdlib package>.<sub>`` only to learn whether it is a frozen module, and importing the package for that
    runs its code (``this`` prints, ``antigravity`` starts a browser).  A parent that is not imported yet gets the
    frozen table's answer, which needs no import."""
    full = importlib.util.resolve_name(name, package) if name.startswith(".") else name
    parent = full.rpartition(".")[0]
    if parent and parent not in sys.modules:
        return importlib.machinery.FrozenImporter.find_spec(full)
    return _find_spec(name, package)


def _install():
    importlib.util.find_spec = find_spec_without_importing
    for i, finder in enumerate(sys.meta_path):
        if finder is importlib.machinery.PathFinder:
            sys.meta_path.insert(i, RepositoryImportGuard())
            return
    sys.meta_path.append(RepositoryImportGuard())  # pragma: no cover - the path finder is always there


def main():
    _install()
    from pylint import run_pylint

    sys.argv = ["pylint", *sys.argv[1:]]
    run_pylint(sys.argv[1:])


if __name__ == "__main__":
    main()
