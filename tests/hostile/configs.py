"""Hostile repository configuration (issue 22): csproj, Directory.Build.props, Unity's ProjectVersion.txt, tsconfig
and go.mod values that would reach a tool's options, a generated file or a path outside the repository, and files
built to make a backtracking parser run for minutes.  Each case names the exact reason of its configuration file
and keeps the examples of its normal code; one control per language has no configuration trouble at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.cases import SECRET, HygieneCase
from tests.hostile.languages import CS_APP, CS_LIB, GO_LIB, make_csharp_control, make_go_control

REJECTED = Reason.CONFIG_VALUE_REJECTED
TOO_LARGE = Reason.CONFIG_TOO_LARGE
MB = 1_000_000  # read_data_files reads a configuration file up to this many bytes
# a TargetFramework whose platform part, upper-cased into a define, split mcs's response file at the space: mcs then
# wrote its XML documentation (the repository's text) to the path, relative to the tree it compiles
DOC_OPTION = "net6.0-x -doc:../../OUTSIDE/X.XML"

TS_A = "export class Box { size = 3; grow(n: number) { return this.size + n; } }\n"
TS_B = """import { Box } from './a';

// sizes of the boxes a shop keeps
const base = 2;
const extra = base * 3;
export const label = "box";

export function grown(): number {
    const box = new Box();
    return box.grow(extra);
}

export function sized(): number {
    const box = new Box();
    return box.grow(base) + box.size;
}
"""
GO_MAIN = """package main

import (
	"fmt"

	"example.com/m/lib"
)

func main() {
	box := lib.NewBox()
	n := lib.Total([]int{1, 2})
	fmt.Println(box, n)
}
"""


def _csharp(root: Path, name: str, where: str = "") -> Path:
    repo = root / name
    (repo / where).mkdir(parents=True, exist_ok=True)
    (repo / where / "Lib.cs").write_text(CS_LIB)
    (repo / where / "App.cs").write_text(CS_APP)
    return repo


def _csproj(group: str) -> str:
    return f'<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n{group}\n  </PropertyGroup>\n</Project>\n'


def make_cs_framework_option(root: Path, outside: Path) -> HygieneCase:
    """``<TargetFramework>net6.0-x -doc:...`` (the attack the issue reports), with a second TargetFrameworks entry
    aimed at an absolute path outside: both refused, the repository compiled with the default symbols."""
    repo = _csharp(root, "cs_framework_option")
    (repo / "App.csproj").write_text(_csproj(f"    <TargetFrameworks>{DOC_OPTION};net6.0-y -out:{outside}/EVIL.DLL"
                                             "</TargetFrameworks>"))
    return HygieneCase("cs_framework_option", str(repo), "csharp",
                       items={"cs_framework_option/App.csproj": REJECTED},
                       markers=[outside / "EVIL.DLL", outside / "evil.dll"],
                       examples_from={"App.cs": 1})


def make_cs_props_newline(root: Path, outside: Path) -> HygieneCase:
    """A Directory.Build.props whose TargetFramework holds a line break and DefineConstants an option: in a
    response file each line is an argument of its own."""
    repo = _csharp(root, "cs_props_newline", "src")
    (repo / "Directory.Build.props").write_text(_csproj(
        f"    <TargetFramework>net48-x\n-out:{outside}/evil.exe</TargetFramework>\n"
        f"    <DefineConstants>OK;X -recurse:{outside}/*.cs</DefineConstants>"))
    return HygieneCase("cs_props_newline", str(repo), "csharp",
                       items={"cs_props_newline/Directory.Build.props": REJECTED},
                       markers=[outside / "evil.exe"], examples_from={"src/App.cs": 1})


def make_cs_using_code(root: Path) -> HygieneCase:
    """``<Using Include>`` becomes a ``using X;`` line in every file of the project: a value with a ';' would put
    the repository's own code into the analysed copies."""
    repo = _csharp(root, "cs_using_code")
    (repo / "App.csproj").write_text(_csproj("    <ImplicitUsings>enable</ImplicitUsings>").replace(
        "</Project>", '  <ItemGroup>\n    <Using Include="System; public class Injected { }" />\n'
                      '    <Using Include="Shop.Lib" />\n  </ItemGroup>\n</Project>'))
    return HygieneCase("cs_using_code", str(repo), "csharp", items={"cs_using_code/App.csproj": REJECTED},
                       examples_from={"App.cs": 1})


def make_cs_unity_digits(root: Path) -> HygieneCase:
    """A Unity editor version of 5000 digits: converted to an int as it was, it raised (Python's int limit)."""
    repo = _csharp(root, "cs_unity_digits", "Assets")
    (repo / "Assets" / "Game.asmdef").write_text('{"name": "Game"}\n')
    (repo / "ProjectSettings").mkdir()
    (repo / "ProjectSettings" / "ProjectVersion.txt").write_text("m_EditorVersion: " + "9" * 5000 + ".3.1f1\n")
    return HygieneCase("cs_unity_digits", str(repo), "csharp",
                       items={"cs_unity_digits/ProjectSettings/ProjectVersion.txt": REJECTED},
                       examples_from={"Assets/App.cs": 1})


def make_cs_project_bomb(root: Path) -> HygieneCase:
    """A 1 MB csproj of unclosed groups: the regexes read each one to the end of the file (minutes of CPU);
    past the nesting cap the file is refused whole."""
    repo = _csharp(root, "cs_project_bomb")
    (repo / "App.csproj").write_text("<Project>" + "<PropertyGroup>" * ((MB - 100) // 15))
    return HygieneCase("cs_project_bomb", str(repo), "csharp", items={"cs_project_bomb/App.csproj": TOO_LARGE},
                       examples_from={"App.cs": 1})


def make_cs_frameworks_flood(root: Path) -> HygieneCase:
    """One TargetFrameworks of 72 000 distinct monikers (~1 MB): choosing one looked each up by its position in
    the list, quadratic; a list past its cap refuses the file."""
    repo = _csharp(root, "cs_frameworks_flood")
    monikers: list[str] = []
    size = 0
    while size < MB - 300:
        monikers.append(f"net6.0-p{len(monikers)};")
        size += len(monikers[-1])
    (repo / "App.csproj").write_text(_csproj("    <TargetFrameworks>" + "".join(monikers) + "net48</TargetFrameworks>"))
    return HygieneCase("cs_frameworks_flood", str(repo), "csharp",
                       items={"cs_frameworks_flood/App.csproj": TOO_LARGE}, examples_from={"App.cs": 1})


def _typescript(root: Path, name: str) -> Path:
    repo = root / name
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.ts").write_text(TS_A)
    (repo / "src" / "b.ts").write_text(TS_B)
    return repo


def make_ts_control(root: Path) -> HygieneCase:
    repo = _typescript(root, "ts_control")
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["src/*"]}}}\n')
    return HygieneCase("ts_control", str(repo), "typescript", examples_from={"src/b.ts": 1})


def make_ts_paths_outside(root: Path, outside: Path) -> HygieneCase:
    """``paths`` and ``baseUrl`` aimed outside the repository (relative and absolute), with a file importing
    through them: refused, and the outside file's text never reaches an output."""
    repo = _typescript(root, "ts_paths_outside")
    (outside / "notes.ts").write_text(f'export const secret = "{SECRET.strip()}";\nexport class Box {{}}\n')
    rel = Path(os.path.relpath(outside, repo)).as_posix()
    (repo / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "baseUrl": "../..", "paths": {"secret/*": [f"{rel}/*"], "abs/*": [f"{outside}/*"], "ok/*": ["src/*"]}}}))
    (repo / "src" / "c.ts").write_text("import { secret } from 'secret/notes';\nimport { Box } from 'abs/notes';\n"
                                       "import { Box as B } from 'ok/a';\nexport const s = secret + new B().grow(1);\n")
    return HygieneCase("ts_paths_outside", str(repo), "typescript",
                       items={"ts_paths_outside/tsconfig.json": REJECTED}, examples_from={"src/b.ts": 1})


def make_ts_jsonc_deep(root: Path) -> HygieneCase:
    """A tsconfig of 200 000 nested arrays: json.loads would recurse that deep; past the nesting cap the file is
    refused whole."""
    repo = _typescript(root, "ts_jsonc_deep")
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"baseUrl": "."}, "x": ' + "[" * 200_000)
    return HygieneCase("ts_jsonc_deep", str(repo), "typescript", items={"ts_jsonc_deep/tsconfig.json": TOO_LARGE},
                       examples_from={"src/b.ts": 1})


def make_ts_comma_flood(root: Path) -> HygieneCase:
    """A 1 MB tsconfig of commas (each one copied the rest of the text to look past it: seconds per file, 200
    files per repository) whose baseUrl is an absolute path."""
    repo = _typescript(root, "ts_comma_flood")
    head = '{"compilerOptions": {"baseUrl": "/etc"}, "x": [1'
    (repo / "tsconfig.json").write_text(head + ", /* c */ 1" * ((MB - 100) // 11) + "]}")
    return HygieneCase("ts_comma_flood", str(repo), "typescript", items={"ts_comma_flood/tsconfig.json": REJECTED},
                       examples_from={"src/b.ts": 1})


def make_ts_extends_web(root: Path) -> HygieneCase:
    """150 tsconfigs each extending the next six (wrapping round into cycles): followed path by path to depth 8,
    6^8 walks per config; one of them maps a target with two '*'."""
    repo = _typescript(root, "ts_extends_web")
    n = 150
    for i in range(n):
        d = repo / "cfg" / f"c{i:03d}"
        d.mkdir(parents=True)
        data: dict = {"extends": [f"../c{j % n:03d}/tsconfig.json" for j in range(i + 1, i + 7)]}
        if i == 100:
            data["compilerOptions"] = {"paths": {"w/*": ["../../src/*", "../../src/*/*"]}}
        (d / "tsconfig.json").write_text(json.dumps(data))
    return HygieneCase("ts_extends_web", str(repo), "typescript",
                       items={"ts_extends_web/cfg/c100/tsconfig.json": REJECTED}, examples_from={"src/b.ts": 1})


def _go(root: Path, name: str, go_mod: str) -> Path:
    repo = root / name
    (repo / "lib").mkdir(parents=True)
    (repo / "go.mod").write_text(go_mod)
    (repo / "lib" / "lib.go").write_text(GO_LIB)
    (repo / "main.go").write_text(GO_MAIN)
    return repo


def make_go_module_outside(root: Path) -> HygieneCase:
    """A module path that is a relative path out of the repository: refused; the package paths come from the
    imports the tree uses, as without a go.mod."""
    repo = _go(root, "go_module_outside", 'module "../../outside"\n\ngo 1.18\n')
    return HygieneCase("go_module_outside", str(repo), "go", items={"go_module_outside/go.mod": REJECTED},
                       examples_from={"main.go": 2})


def make_go_mod_blank_lines(root: Path) -> HygieneCase:
    """1 MB of blank lines before the module line (a ``^\\s*`` regex backtracked over them: ~15 minutes), whose
    path holds a space and an option."""
    repo = _go(root, "go_mod_blank_lines", "\n" * (MB - 100) + 'module "example.com/m -toolexec=/bin/sh"\n')
    return HygieneCase("go_mod_blank_lines", str(repo), "go", items={"go_mod_blank_lines/go.mod": REJECTED},
                       examples_from={"main.go": 2})


def make_config_suite(root: Path, outside: Path) -> list[HygieneCase]:
    """Every configuration case, and a control per language."""
    root.mkdir(parents=True, exist_ok=True)
    return [
        make_csharp_control(root), make_cs_framework_option(root, outside), make_cs_props_newline(root, outside),
        make_cs_using_code(root), make_cs_unity_digits(root), make_cs_project_bomb(root),
        make_cs_frameworks_flood(root),
        make_ts_control(root), make_ts_paths_outside(root, outside), make_ts_jsonc_deep(root),
        make_ts_comma_flood(root), make_ts_extends_web(root),
        make_go_control(root), make_go_module_outside(root), make_go_mod_blank_lines(root),
    ]
