"""Python: stub intra-project imports with empty classes, run pylint on both trees, keep the new errors.

Each file's project imports are replaced, in place, by empty classes bound to the same local names
(``stubs``); one pylint process lints the whole original tree and one the whole stubbed tree, with our own
rcfile and no plugins (``toolchain``); a stubbed tree keeps a line map back to the original so diagnostics of
both runs are compared in original coordinates, and each new one is attributed to the import it came from
(``attribution``), in benchsmith's line numbering (``lines``).  ``modules`` is the repository as Python sees it
(namespace packages included); ``kinds`` labels each use and walks class chains, ``inherited`` and ``submodules``
scan the trees for the uses pylint leaves unreported, ``pragmas`` makes the repository's pylint pragmas inert.
"""

from benchsmith.analyzers.python.analyzer import PythonAnalyzer, PythonPlan
from benchsmith.analyzers.python.lines import LineNumbering, python_lines
from benchsmith.analyzers.python.modules import ModuleIndex
from benchsmith.analyzers.python.stubs import Binding, FileStubs, stub_file
from benchsmith.analyzers.python.toolchain import PYLINT_DRIVER, PYLINT_MESSAGES, PYLINT_RC

__all__ = ["PythonAnalyzer", "PythonPlan", "LineNumbering", "python_lines", "ModuleIndex", "Binding", "FileStubs",
           "stub_file", "PYLINT_DRIVER", "PYLINT_MESSAGES", "PYLINT_RC"]
