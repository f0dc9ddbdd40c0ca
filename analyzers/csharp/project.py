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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

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
_UNITY_VERSION = re.compile(r"m_EditorVersion:\s*(\d+)\.(\d+)")

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

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_GROUP = re.compile(r"<(PropertyGroup|ItemGroup)\b([^>]*?)(?<!/)>(.*?)</\1\s*>", re.S)
_ELEMENT = re.compile(r"<([A-Za-z_][\w.\-]*)\b([^>]*?)(?:/>|>(.*?)</\1\s*>)", re.S)
_ATTR = re.compile(r"([A-Za-z_][\w.\-]*)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what a -define: may carry
_PROJECT_SDK = re.compile(r"<Project\b[^>]*?\bSdk\s*=\s*[\"']([^\"']+)[\"']", re.S)


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


def _attrs(text: str) -> dict[str, str]:
    return {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _ATTR.finditer(text)}


def _unescape(s: str) -> str:
    return (s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'")
            .replace("&amp;", "&")).strip()


@lru_cache(maxsize=256)
def parse_project(text: str) -> _Props:
    """The unconditional settings of one project file (any text: malformed XML yields what could be read)."""
    text = _COMMENT.sub("", text[:1_000_000])
    props = _Props()
    m = _PROJECT_SDK.search(text)
    if m:
        props.sdk = m.group(1).split("/")[0].strip()
    for g in _GROUP.finditer(text):
        kind, gattrs, body = g.group(1), _attrs(g.group(2)), g.group(3) or ""
        group_tfm = _tfm_condition(gattrs["Condition"]) if "Condition" in gattrs else None
        if "Condition" in gattrs and group_tfm is None:
            continue
        for e in _ELEMENT.finditer(body):
            name, eattrs, value = e.group(1), _attrs(e.group(2)), _unescape(e.group(3) or "")
            tfm = group_tfm
            if "Condition" in eattrs:
                tfm = _tfm_condition(eattrs["Condition"]) if group_tfm is None else None
                if tfm is None:
                    continue
            if tfm is not None:
                if kind == "PropertyGroup" and name == "DefineConstants":
                    props.tfm_defines.setdefault(tfm, []).extend(
                        s.strip() for s in re.split(r"[;,]", value) if _SYMBOL.fullmatch(s.strip()))
                continue
            if kind == "PropertyGroup":
                if name == "DefineConstants":
                    props.defines = [s.strip() for s in re.split(r"[;,]", value)
                                     if _SYMBOL.fullmatch(s.strip())] + (props.defines if "$(" in value else [])
                elif name == "ImplicitUsings":
                    props.implicit = value.lower()
                elif name in ("TargetFramework", "TargetFrameworks"):
                    props.frameworks = [s.strip() for s in value.split(";") if s.strip() and "$(" not in s]
            elif name == "Using":
                if "Alias" in eattrs or eattrs.get("Static", "").lower() == "true":
                    continue  # an alias or a static import is not a namespace using
                if eattrs.get("Include"):
                    props.using_add.append(eattrs["Include"].strip())
                if eattrs.get("Remove"):
                    props.using_remove.append(eattrs["Remove"].strip())
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
        if platform:
            out.add(re.sub(r"\d.*$", "", platform).upper())
    elif m := re.fullmatch(r"net(\d{2,3})", base):
        v = m.group(1)
        out |= {"NETFRAMEWORK", "NET" + v}
        out |= {f"NET{x}_OR_GREATER" for x in _NETFX if int(x.ljust(3, "0")) <= int(v.ljust(3, "0"))}
    return out


def _closest_to_mono(frameworks: list[str]) -> str | None:
    """mcs compiles against mono's .NET Framework 4.x class library: a net4x or netstandard2.x target's code is
    the code it can check; otherwise the first listed."""
    def rank(t: str) -> int:
        t = t.lower()
        if re.fullmatch(r"net4\d*", t):
            return 0
        if t.startswith("netstandard2"):
            return 1
        if t.startswith("netstandard"):
            return 2
        return 3
    return min(frameworks, key=lambda t: (rank(t), frameworks.index(t))) if frameworks else None


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
                m = _UNITY_VERSION.search(configs[path])
                self.unity_version = (int(m.group(1)), int(m.group(2))) if m else UNITY_DEFAULT_VERSION
        self.configs = configs
        self._cache: dict[str, ProjectSettings] = {}  # by folder
        self._by_path: dict[str, ProjectSettings] = {}

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
        final = tuple(u for u in usings if u not in removed and not (u in seen or seen.add(u))
                      and re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", u))
        out = ProjectSettings(frozenset(defines), final, project or "")
        self._cache[folder] = self._by_path[path] = out
        return out
