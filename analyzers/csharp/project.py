"""What a C# build would give each file, read from the repository's project files as data (msbuild never runs).

From ``*.csproj`` and ``Directory.Build.props`` (the nearest of each up a file's directories, as msbuild picks
them; one project's settings cover the files below its folder):
- the preprocessor symbols: ``DefaultDefines`` (``TRACE`` and ``RELEASE``, what ``dotnet build -c Release``
  defines), the target framework's symbols (``NETSTANDARD2_0``, ``NET6_0_OR_GREATER``... for the framework
  closest to the mono class library mcs compiles against, when several are listed), and the project's own
  ``DefineConstants``;
- the usings the SDK adds when ``ImplicitUsings`` is ``enable``/``true`` (per SDK: plain, Web, Worker), plus
  ``<Using Include=...>`` items, less ``<Using Remove=...>``.
Only unconditional settings count: a ``Condition`` depends on an msbuild evaluation we never do (a
``TraceAlloc`` configuration's ``DefineConstants`` is not the build's) -- except the common
``Condition="'$(TargetFramework)' == 'X'"`` on ``DefineConstants``, which names the framework chosen here.  Without a project file a file gets the
default symbols and no implicit usings.

Every value that reaches mcs's response file or a file's text is checked against its grammar first (a framework
moniker, a symbol name, a namespace: ``benchsmith.config_values``); one that fails is refused and kept in
``ProjectIndex.rejections`` for the analyzer to record, as is a file past a parsing cap (``project_xml``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from benchsmith.analyzers.csharp import project_xml
from benchsmith.config_values import (MAX_LIST_VALUES, Rejection, ValueKind, is_framework_moniker, is_namespace,
                                      is_preprocessor_symbol)

DEFAULT_DEFINES = ("RELEASE", "TRACE")
PROJECT_FILES = ("Directory.Build.props",)
PROJECT_SUFFIX = ".csproj"
# Unity builds without a committed project file: a folder with an assembly definition (``*.asmdef``) is one Unity
# assembly, and ``ProjectSettings/ProjectVersion.txt`` names the editor version of a whole Unity project.  Their
# code is written against the symbols the Unity compiler defines (``#if UNITY_2018_3_OR_NEWER``).
UNITY_ASSEMBLY_SUFFIX = ".asmdef"
UNITY_VERSION_FILE = "ProjectSettings/ProjectVersion.txt"
UNITY_DEFAULT_VERSION = (2021, 3)  # an LTS release, when no ProjectVersion.txt says which
# the (year, last minor) of each Unity release line before the one defined, for the ``_OR_NEWER`` chain
_UNITY_LINES = ((5, 6), (2017, 4), (2018, 4), (2019, 4), (2020, 3), (2021, 3), (2022, 3), (2023, 2))
_UNITY_KEY = "m_EditorVersion:"
# bounded digits: a year of thousands of digits would not even convert to an int
_UNITY_VERSION = re.compile(r"[ \t]*(\d{1,5})\.(\d{1,3})(?![\d])")

SDK_USINGS = ("System", "System.Collections.Generic", "System.IO", "System.Linq", "System.Net.Http",
              "System.Threading", "System.Threading.Tasks")
_HOSTING = ("Microsoft.Extensions.Configuration", "Microsoft.Extensions.DependencyInjection",
            "Microsoft.Extensions.Hosting", "Microsoft.Extensions.Logging")
EXTRA_SDK_USINGS = {
    "microsoft.net.sdk.web": ("System.Net.Http.Json", "Microsoft.AspNetCore.Builder", "Microsoft.AspNetCore.Hosting",
                              "Microsoft.AspNetCore.Http", "Microsoft.AspNetCore.Routing", *_HOSTING),
    "microsoft.net.sdk.worker": _HOSTING,
    "microsoft.net.sdk.razor": (),
    "microsoft.net.sdk.blazorwebassembly": ("System.Net.Http.Json", "Microsoft.AspNetCore.Components",
                                            "Microsoft.AspNetCore.Components.Forms",
                                            "Microsoft.AspNetCore.Components.Routing",
                                            "Microsoft.AspNetCore.Components.Web",
                                            "Microsoft.AspNetCore.Components.WebAssembly.Http",
                                            "Microsoft.JSInterop", *_HOSTING),
}

_GROUPS = ("PropertyGroup", "ItemGroup")


@dataclass(frozen=True)
class ProjectSettings:
    defines: frozenset[str] = frozenset(DEFAULT_DEFINES)
    implicit_usings: tuple[str, ...] = ()  # namespaces every file of the project imports
    project: str = ""  # the project file (or "" when none applies): files of one project share global usings


@dataclass
class _Props:
    sdk: str = ""
    defines: list[str] = field(default_factory=list)
    implicit: str | None = None
    frameworks: list[str] = field(default_factory=list)
    using_add: list[str] = field(default_factory=list)
    using_remove: list[str] = field(default_factory=list)
    # DefineConstants under ``Condition="'$(TargetFramework)' == 'X'"`` (the one condition read: it names the
    # target framework, which is chosen here anyway): lower-cased framework -> its added symbols
    tfm_defines: dict[str, list[str]] = field(default_factory=dict)
    # values refused by their grammar: (key, value, what it must be); the file's path is added by ProjectIndex
    rejected: list[tuple[str, str, ValueKind]] = field(default_factory=list)
    too_large: str = ""  # the parsing cap the file passed: then none of its settings count


def _symbols(props: _Props, key: str, value: str) -> list[str]:
    """The symbols of a ``DefineConstants`` value; ``$(...)`` references (msbuild is never run) are skipped, any
    other entry that is not a symbol name is refused."""
    out = []
    for s in re.split(r"[;,]", value):
        s = s.strip()
        if not s or "$(" in s:
            continue
        if is_preprocessor_symbol(s):
            out.append(s)
        else:
            props.rejected.append((key, s, ValueKind.PREPROCESSOR_SYMBOL))
    return out


def _groups(root: project_xml.Element):
    """The closed PropertyGroup/ItemGroup elements, in document order, not looking inside a group."""
    stack = list(reversed(root.children))
    while stack:
        e = stack.pop()
        if e.name in _GROUPS:
            if e.closed:
                yield e
            continue
        stack.extend(reversed(e.children))


@lru_cache(maxsize=256)
def parse_project(text: str) -> _Props:
    """The unconditional settings of one project file (any text: malformed XML yields what could be read)."""
    props = _Props()
    doc = project_xml.parse(text)
    if doc.too_large:
        props.too_large = doc.too_large
        return props
    sdk = next((e.attrs["Sdk"] for e in doc.root.iter() if e.name == "Project" and "Sdk" in e.attrs), None)
    if sdk:
        props.sdk = sdk.split("/")[0].strip()
    for g in _groups(doc.root):
        kind, gattrs = g.name, g.attrs
        group_tfm = _tfm_condition(gattrs["Condition"]) if "Condition" in gattrs else None
        if "Condition" in gattrs and group_tfm is None:
            continue
        for e in g.children:
            if not e.closed:
                continue
            name, eattrs, value = e.name, e.attrs, e.text()
            tfm = group_tfm
            if "Condition" in eattrs:
                tfm = _tfm_condition(eattrs["Condition"]) if group_tfm is None else None
                if tfm is None:
                    continue
            if tfm is not None:
                if kind == "PropertyGroup" and name == "DefineConstants":
                    props.tfm_defines.setdefault(tfm, []).extend(_symbols(props, name, value))
                continue
            if kind == "PropertyGroup":
                if name == "DefineConstants":
                    props.defines = _symbols(props, name, value) + (props.defines if "$(" in value else [])
                elif name == "ImplicitUsings":
                    props.implicit = value.lower()
                elif name in ("TargetFramework", "TargetFrameworks"):
                    props.frameworks = []
                    for s in value.split(";"):
                        s = s.strip()
                        if not s or "$(" in s:
                            continue
                        if is_framework_moniker(s):
                            props.frameworks.append(s)
                        else:
                            props.rejected.append((name, s, ValueKind.FRAMEWORK_MONIKER))
            elif name == "Using":
                if "Alias" in eattrs or eattrs.get("Static", "").lower() == "true":
                    continue  # an alias or a static import is not a namespace using
                for attr, into in (("Include", props.using_add), ("Remove", props.using_remove)):
                    ns = eattrs.get(attr, "").strip()
                    if not ns:
                        continue
                    if is_namespace(ns):
                        into.append(ns)
                    else:
                        props.rejected.append((f"Using {attr}", ns, ValueKind.NAMESPACE))
    # every using goes into every file of the project, every symbol into the command line: a list past its cap
    # (real projects: tens) refuses the file rather than multiply it
    for what, n in (("Using items", len(props.using_add) + len(props.using_remove)),
                    ("DefineConstants symbols", len(props.defines) + sum(map(len, props.tfm_defines.values()))),
                    ("target frameworks", len(props.frameworks))):
        if n > MAX_LIST_VALUES:
            return _Props(too_large=f"{n} {what}, over the {MAX_LIST_VALUES} cap")
    return props


_TFM_CONDITION = re.compile(r"""\s*'\s*\$\(TargetFramework\)\s*'\s*==\s*'\s*([A-Za-z0-9.\-]+)\s*'\s*""")


def _tfm_condition(condition: str) -> str | None:
    m = _TFM_CONDITION.fullmatch(condition)
    return m.group(1).lower() if m else None


# ----------------------------------------------------------------------------------------------------------------
# Target framework symbols (the SDK's rules, by version)
# ----------------------------------------------------------------------------------------------------------------

_NETFX = ("20", "35", "40", "45", "451", "452", "46", "461", "462", "47", "471", "472", "48", "481")
_NETSTANDARD = ("1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "2.0", "2.1")
_NETCORE = ("1.0", "1.1", "2.0", "2.1", "2.2", "3.0", "3.1")
_NET = ("5.0", "6.0", "7.0", "8.0", "9.0", "10.0")


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def unity_symbols(version: tuple[int, int]) -> set[str]:
    """What the Unity compiler defines for an editor ``(year, minor)``: ``UNITY_2021``, ``UNITY_2021_3``, every
    ``UNITY_X_Y_OR_NEWER`` up to it (from ``UNITY_5_3_OR_NEWER``), the .NET Standard 2.0 API level and the C# level
    symbol; never ``UNITY_EDITOR`` (a player build)."""
    year, minor = version
    out = {f"UNITY_{year}", f"UNITY_{year}_{minor}", "NET_STANDARD_2_0", "NET_STANDARD", "CSHARP_7_3_OR_NEWER",
           "ENABLE_MONO"}
    for y, last in _UNITY_LINES:
        for m in range(3 if y == 5 else 1, last + 1):
            if (y, m) <= (year, minor):
                out.add(f"UNITY_{y}_{m}_OR_NEWER")
    return out


def framework_symbols(tfm: str) -> set[str]:
    tfm = tfm.strip().lower()
    base, _, platform = tfm.partition("-")
    out: set[str] = set()
    if m := re.fullmatch(r"netstandard(\d+\.\d+)", base):
        v = m.group(1)
        out |= {"NETSTANDARD", "NETSTANDARD" + v.replace(".", "_")}
        out |= {f"NETSTANDARD{x.replace('.', '_')}_OR_GREATER" for x in _NETSTANDARD if _vkey(x) <= _vkey(v)}
    elif m := re.fullmatch(r"netcoreapp(\d+\.\d+)", base):
        v = m.group(1)
        out |= {"NETCOREAPP", "NETCOREAPP" + v.replace(".", "_")}
        out |= {f"NETCOREAPP{x.replace('.', '_')}_OR_GREATER" for x in _NETCORE if _vkey(x) <= _vkey(v)}
    elif m := re.fullmatch(r"net(\d+\.\d+)", base):
        v = m.group(1)
        out |= {"NET", "NET" + v.replace(".", "_"), "NETCOREAPP"}
        out |= {f"NET{x.replace('.', '_')}_OR_GREATER" for x in _NET if _vkey(x) <= _vkey(v)}
        out |= {f"NETCOREAPP{x.replace('.', '_')}_OR_GREATER" for x in _NETCORE}
        symbol = re.sub(r"\d.*$", "", platform).upper()
        if symbol and is_preprocessor_symbol(symbol):  # a moniker's platform may carry '.' or '+'
            out.add(symbol)
    elif m := re.fullmatch(r"net(\d{2,3})", base):
        v = m.group(1)
        out |= {"NETFRAMEWORK", "NET" + v}
        out |= {f"NET{x}_OR_GREATER" for x in _NETFX if int(x.ljust(3, "0")) <= int(v.ljust(3, "0"))}
    return out


def _closest_to_mono(frameworks: list[str]) -> str | None:
    """mcs compiles against mono's .NET Framework 4.x class library: a net4x or netstandard2.x target's code is
    the code it can check; otherwise the first listed."""
    frameworks = [t for t in frameworks if is_framework_moniker(t)]

    def rank(t: str) -> int:
        t = t.lower()
        if re.fullmatch(r"net4\d*", t):
            return 0
        if t.startswith("netstandard2"):
            return 1
        if t.startswith("netstandard"):
            return 2
        return 3
    # the first of the best rank (min over (rank, position): a list.index per candidate was quadratic)
    return min(((rank(t), i, t) for i, t in enumerate(frameworks)), default=(0, 0, None))[2]


# ----------------------------------------------------------------------------------------------------------------
# Files -> settings
# ----------------------------------------------------------------------------------------------------------------


class ProjectIndex:
    """The settings of each source file, from the configs ``CSharpAnalyzer.read_configs`` read."""

    def __init__(self, configs: dict[str, str]) -> None:
        self.projects: dict[str, str] = {}  # folder -> project file path (the first by name when several)
        self.props: dict[str, str] = {}  # folder -> Directory.Build.props path
        self.unity: set[str] = set()  # folders of Unity assembly definitions
        self.unity_version: tuple[int, int] | None = None  # the Unity project's editor version, when it has one
        self._unity_rejected: list[Rejection] = []
        for path in sorted(configs):
            p = PurePosixPath(path)
            folder = str(p.parent) if str(p.parent) != "." else ""
            if p.name.lower().endswith(PROJECT_SUFFIX):
                self.projects.setdefault(folder, path)
            elif p.name in PROJECT_FILES:
                self.props.setdefault(folder, path)
            elif p.name.lower().endswith(UNITY_ASSEMBLY_SUFFIX):
                self.unity.add(folder)
            elif path.endswith(UNITY_VERSION_FILE) and self.unity_version is None:
                self.unity_version = self._unity_version(path, configs[path])
        self.configs = configs
        self._cache: dict[str, ProjectSettings] = {}  # by folder
        self._by_path: dict[str, ProjectSettings] = {}

    def _unity_version(self, path: str, text: str) -> tuple[int, int]:
        at = text.find(_UNITY_KEY)
        if at < 0:
            return UNITY_DEFAULT_VERSION
        m = _UNITY_VERSION.match(text, at + len(_UNITY_KEY))
        if m is None:
            line = text[at + len(_UNITY_KEY):].split("\n", 1)[0].strip()
            self._unity_rejected.append(Rejection.of(path, _UNITY_KEY.rstrip(":"), line, ValueKind.EDITOR_VERSION))
            return UNITY_DEFAULT_VERSION
        return int(m.group(1)), int(m.group(2))

    def rejections(self) -> list[Rejection]:
        """The refused values (and files past a parsing cap) of the project files this index applies, by path."""
        out = list(self._unity_rejected)
        for path in sorted({*self.projects.values(), *self.props.values()}):
            p = parse_project(self.configs[path])
            if p.too_large:
                out.append(Rejection.too_large(path, p.too_large))
            out.extend(Rejection.of(path, key, value, kind) for key, value, kind in p.rejected)
        return out

    @staticmethod
    def _up(folder: str):
        parts = folder.split("/") if folder else []
        for i in range(len(parts), -1, -1):
            yield "/".join(parts[:i])

    def settings(self, path: str) -> ProjectSettings:
        hit = self._by_path.get(path)  # asked for several times per file: pathlib would cost more than the rest
        if hit is not None:
            return hit
        folder = str(PurePosixPath(path).parent)
        folder = "" if folder == "." else folder
        hit = self._cache.get(folder)
        if hit is not None:
            self._by_path[path] = hit
            return hit
        project = next((self.projects[f] for f in self._up(folder) if f in self.projects), None)
        props = next((self.props[f] for f in self._up(folder) if f in self.props), None)
        merged = _Props()
        for cfg in (props, project):  # Directory.Build.props is imported first; the project overrides it
            if cfg is None:
                continue
            p = parse_project(self.configs[cfg])
            merged.sdk = p.sdk or merged.sdk
            merged.defines = p.defines if p.defines else merged.defines
            merged.implicit = p.implicit if p.implicit is not None else merged.implicit
            merged.frameworks = p.frameworks or merged.frameworks
            merged.using_add += p.using_add
            merged.using_remove += p.using_remove
            for k, v in p.tfm_defines.items():
                merged.tfm_defines.setdefault(k, []).extend(v)
        defines = set(DEFAULT_DEFINES) | set(merged.defines)
        if project is None and (self.unity_version is not None or any(f in self.unity for f in self._up(folder))):
            defines |= unity_symbols(self.unity_version or UNITY_DEFAULT_VERSION)
        tfm = _closest_to_mono(merged.frameworks)
        if tfm:
            defines |= framework_symbols(tfm)
            defines |= set(merged.tfm_defines.get(tfm.lower(), ()))
        usings: list[str] = []
        if merged.implicit in ("enable", "true"):
            usings += SDK_USINGS
            usings += EXTRA_SDK_USINGS.get(merged.sdk.lower(), ())
        usings += merged.using_add
        removed = set(merged.using_remove)
        seen: set[str] = set()
        final = tuple(u for u in usings if u not in removed and not (u in seen or seen.add(u)))
        out = ProjectSettings(frozenset(defines), final, project or "")
        self._cache[folder] = self._by_path[path] = out
        return out
