"""Go: file-local stubs for imports of the module's own packages, one type check of each tree, diff.

Each file's imports of project packages are blanked out in place (the characters become spaces, line breaks
stay, so every other position of the file is unchanged) and a package-level ``var x struct{}`` per bound name is
appended after the file's last line.  ``x.Foo`` then fails with ``x.Foo undefined (type struct{} has no field or
method Foo)`` at ``Foo``; a dot import is only removed, so its names fail with ``undefined: Foo`` at the name.
Go imports are per file, so removing them never touches another file, and the stub is an unused-import-free
package-level value (Go has no unused-global error).  Two files of one package stubbing the same name redeclare
it: that error sits on the appended lines, which are never compared.

The type checker is a small program of our own (``benchsmith-gotype``, go/parser + go/types from the standard
library, built once per Go release into a cache directory).  It checks every package of the tree in one process
(the library, its in-package tests and its external ``_test`` package), resolves project imports from source
with the import paths we give it (from the repository's ``go.mod`` files, read as data, or inferred from its
imports), the standard library from the toolchain's export data, and nothing else: an external module is never
looked up, downloaded or built (``GOPROXY=off``, ``GOTOOLCHAIN=local``, ``GOWORK=off``, ``GOFLAGS=-mod=mod``,
private ``GOPATH``/``GOCACHE``), it is just a failed import, which go/types turns into a fake package whose uses
are not errors.  go/types reports every error (no ``-e`` needed: the 10-error limit is the compiler's), with
raw positions (``//line`` directives ignored), as JSON lines.  Build constraints are evaluated for linux/amd64
without cgo, as ``go build`` would on such a machine; files they exclude are left out of both checks.
Directories Go itself ignores (``testdata``, ``vendor``, names starting with ``.`` or ``_``) are left out too.

The package by job: ``scan`` (what a file imports and declares), ``modules`` (which directory an import path
names), ``stubs`` (the stubbed texts; ``//line`` directives neutralised), ``driver`` (the checker's sources in
``driver/``, the go environment and the checker's output), ``attribute`` (a new error -> a reference) and
``analyzer`` (``GoAnalyzer``: the recipe's steps and the go processes).
"""

from benchsmith.analyzers.go.analyzer import GoAnalyzer
from benchsmith.analyzers.go.attribute import CODE_MEMBER, CODE_UNDEFINED, go_ref
from benchsmith.analyzers.go.driver import go_env, parse_driver_output
from benchsmith.analyzers.go.modules import ignored_dir, module_path, package_paths
from benchsmith.analyzers.go.scan import GoFile, GoImport, scan_file
from benchsmith.analyzers.go.stubs import GoStubs, neutralise_line_directives, stub_file

__all__ = ["CODE_MEMBER", "CODE_UNDEFINED", "GoAnalyzer", "GoFile", "GoImport", "GoStubs", "go_env", "go_ref",
           "ignored_dir", "module_path", "neutralise_line_directives", "package_paths", "parse_driver_output",
           "scan_file", "stub_file"]
