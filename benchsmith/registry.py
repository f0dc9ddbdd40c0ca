"""One registry style for everything chosen by name: languages (analyzers), generation backends, commands,
retrievers and container images.

An entry is a string, ``"package.module:attr"`` (or ``"package.module"`` for the module itself), so listing the
names, validating a choice or building an enum of them never imports the code behind them; ``load`` imports the
one that was chosen.  A registry is a read-only ``Mapping`` of name -> entry string, so it can stand where a dict
of names stood.  An unknown name is a ``UnknownName`` (both a ``KeyError`` and a ``ValueError``, which is what
the lookups it replaced raised) whose message lists the known names and suggests the closest ones.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, Generic, Iterator, Mapping, TypeVar

from benchsmith.enums import StrEnum

T = TypeVar("T")
E = TypeVar("E", bound=StrEnum)


def did_you_mean(name: object, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known names, or ``""`` when none is close."""
    close = difflib.get_close_matches(str(name).lower(), known, n=3, cutoff=0.6) if isinstance(name, str) else []
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def load_entry(target: str) -> Any:
    """The object an entry string names: ``"package.module:attr.attr"``, or the module itself."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


class UnknownName(KeyError, ValueError):
    """A name no registry entry has; the message names the known ones and the closest matches."""

    def __init__(self, kind: str, name: object, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        msg = f"unknown {kind} {name!r}; choose from: {', '.join(sorted(known)) or '(none)'}"
        msg += did_you_mean(name, known)
        super().__init__(msg)
        self.message = msg

    def __str__(self) -> str:  # KeyError would print the message quoted
        return self.message


class Registry(Mapping[str, str], Generic[T]):
    """Names -> ``"module:attr"`` entries, in declaration order, with aliases and optional one-line notes."""

    def __init__(self, kind: str, entries: Mapping[str, str], *, aliases: Mapping[str, str] | None = None,
                 notes: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, str] = {}
        self._aliases: dict[str, str] = {}
        self._notes: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        for name, target in entries.items():
            self.register(name, target, (notes or {}).get(name, ""))
        for alias, name in (aliases or {}).items():
            self.alias(alias, name)

    # -------------------------------------------------------------------------------------------- declaring

    def register(self, name: str, target: str, note: str = "") -> None:
        """Add (or replace) an entry; nothing is imported until ``load(name)``."""
        if not isinstance(name, str) or not name or not isinstance(target, str) or not target.strip(":"):
            raise ValueError(f"{self.kind} registry: bad entry {name!r} -> {target!r}")
        self._entries[name] = target
        self._loaded.pop(name, None)
        if note:
            self._notes[name] = note

    def unregister(self, name: str) -> None:
        """Remove an entry and its aliases (a plug-in's, or a test's)."""
        key = self.resolve(name)
        del self._entries[key]
        self._loaded.pop(key, None)
        self._notes.pop(key, None)
        self._aliases = {a: n for a, n in self._aliases.items() if n != key}

    def alias(self, alias: str, name: str) -> None:
        if name not in self._entries:
            raise UnknownName(self.kind, name, self.names())
        self._aliases[alias] = name

    # -------------------------------------------------------------------------------------------- looking up

    def names(self) -> list[str]:
        """Entry names in declaration order (aliases excluded)."""
        return list(self._entries)

    def resolve(self, name: str) -> str:
        """The entry name for ``name`` or one of its aliases; ``UnknownName`` otherwise."""
        if isinstance(name, str):
            if name in self._entries:
                return name
            if name in self._aliases:
                return self._aliases[name]
        raise UnknownName(self.kind, name, self.names())

    def note(self, name: str) -> str:
        return self._notes.get(self.resolve(name), "")

    def load(self, name: str) -> T:
        """Import and return the object behind ``name`` (cached)."""
        key = self.resolve(name)
        if key not in self._loaded:
            self._loaded[key] = load_entry(self._entries[key])
        return self._loaded[key]

    def load_all(self) -> dict[str, T]:
        return {name: self.load(name) for name in self._entries}

    def enum(self, cls_name: str, base: type[E], module: str) -> type[E]:
        """A ``StrEnum`` subclass of ``base`` with one member per entry (``"c_sharp"`` -> ``C_SHARP``).

        ``base`` carries the methods (it must have no members); ``module`` is where the enum is defined, so its
        members pickle by name."""
        members = [(name.upper().replace("-", "_"), name) for name in self._entries]
        return base(cls_name, members, module=module, qualname=cls_name)  # type: ignore[call-overload]

    # -------------------------------------------------------------------------------------------- Mapping

    def __getitem__(self, name: str) -> str:
        return self._entries[self.resolve(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._aliases)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self._entries!r})"
