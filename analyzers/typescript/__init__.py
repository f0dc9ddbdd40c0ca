"""TypeScript: stub project imports with empty classes, compile both trees once with our own pinned ``tsc``.

Every file's imports of project files (``import {A} from './a'``, ``import A from``, ``import * as ns from``,
``import type``, ``import R = require(...)``, path-mapped specifiers) are replaced by empty declarations bound to
the same local names (``stubs``).  Because each file only loses its *own* imports and every importer is stubbed
too, one stubbed tree serves all files: one ``tsc`` over the original tree, one over the stubbed tree, and the
diagnostics only the stubbed run has (keyed by file, position and code) are the cross-file references
(``attribution``).

Toolchain isolation (``compile``): ``tsc`` is the pinned copy installed by ``scripts/setup_toolchains.sh``, run
with ``node`` directly, an environment and a tsconfig we write.  A repository's tsconfig files are only parsed as
data for ``paths``/``baseUrl`` (``tsconfig``), read by ``read_configs`` into ``snapshot.configs``.

The original tree is compiled by our checker script (``checker.js``, ``checker``) rather than the tsc CLI: the same
pinned TypeScript package and the same tsconfig, the same diagnostics printed the same way, and then every name of
the TypeScript files resolved by the type checker; a name whose declarations all lie in other project files is a
reference with its definition (members reached through inferred types, contextually typed object keys and
callback parameters, chains like ``new ns.a.B()``).  JavaScript modules a source imports (``~/env.mjs``) are
compiled beside the sources as ``companions`` (``allowJs``, never checked, never a place of references).

Uses a stub answers without any diagnostic (type annotations, ``extends``/``implements``, ``new``, decorators, JSX
tags, members of a variable typed with a project type) come from a scan of each file's import bindings over its
tree-sitter tree (``uses``, ``typed``); every reference is labelled with its ``ReferenceKind`` by the place of its
name (``kinds``).  ``.d.ts`` files take part in both compiles (other files import their declarations) and are never
stubbed; only the scan finds references in them.  Files tsc cannot parse are recorded (``syntax_error``) and left
out of both compiles; a file only tree-sitter rejects is analysed from its error-tolerant tree.

The package by job: ``positions`` (tsc's line and UTF-16 numbering), ``tsc_output`` (diagnostic lines and codes),
``tsconfig`` (JSONC, path configs), ``resolver`` (module resolution), ``scan`` (imports, exports, declarations),
``stubs`` (stub planning), ``attribution``, ``kinds`` (a reference's kind), ``uses`` and ``typed`` (the binding
scan), ``compile`` (one tsc run), ``checker`` (the original compile with the type checker's references),
``companions`` (imported JavaScript modules), ``analyzer`` (the class on the recipe).

Subclassing (the JavaScript analyzer, ``analyzers/javascript.py``): override the class attributes (language,
extensions, grammar, resolution extensions, ``namespace_stubs``, ``stub_require_calls``, ``scanner``) and
``compiler_options``; the rest is shared.
"""

from benchsmith.analyzers.typescript.analyzer import TypeScriptAnalyzer
from benchsmith.analyzers.typescript.compile import TSC_ENV
from benchsmith.analyzers.typescript.model import FileInfo, Plan, StubbedFile
from benchsmith.analyzers.typescript.tsc_output import TscMessage

__all__ = ["TSC_ENV", "FileInfo", "Plan", "StubbedFile", "TscMessage", "TypeScriptAnalyzer"]
