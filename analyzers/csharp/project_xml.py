"""A project file's XML read in one pass, linear in its length whatever it holds (msbuild files are small, but a
repository's are untrusted: the regexes this replaces took ~16 minutes on a 1 MB file of unclosed groups).

Only what ``project`` reads is kept: elements with their attributes and text, comments, processing instructions
and declarations skipped.  Each scan step looks for one delimiter with ``str.find`` or matches an anchored regex
without nested quantifiers, then moves past what it read, so no character is read more than a fixed number of
times.  Malformed input yields what was read before the fault (an unclosed quote, tag or comment ends the scan); an
element counts only when it is closed, by ``/>`` or its own end tag.  Nesting deeper than ``MAX_DEPTH`` or more
than ``MAX_ELEMENTS`` elements refuse the file (``Document.too_large`` says which cap).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchsmith.analyzers.common import walk
from benchsmith.config_values import MAX_CONFIG_CHARS, MAX_DEPTH, MAX_ELEMENTS

_NAME = re.compile(r"[A-Za-z_][\w.\-:]*")
_ATTR = re.compile(r"\s+([A-Za-z_][\w.\-:]*)\s*=\s*([\"'])")
_TAG_END = re.compile(r"\s*(/?)>")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&amp;": "&"}
_ENTITY = re.compile(r"&(?:lt|gt|quot|apos|amp);")


def unescape(s: str) -> str:
    """The five predefined entities (numeric references are left as they are: a value holding one is refused by
    its grammar rather than decoded into something else)."""
    return _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], s) if "&" in s else s


@dataclass
class Element:
    name: str
    attrs: dict[str, str]
    children: list["Element"] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)  # own text (entities decoded), in order
    closed: bool = False

    def text(self) -> str:
        """Own and descendants' text, stripped (a property's value)."""
        out: list[str] = []
        stack = [self]
        while stack:  # iterative: depth is capped anyway, but the order is the text's own
            e = stack.pop()
            out.extend(e.parts)
            stack.extend(reversed(e.children))
        return "".join(out).strip()

    def iter(self):
        """This element and every descendant, in document order."""
        return walk(self)


@dataclass
class Document:
    root: Element  # a synthetic container of the top-level elements
    too_large: str = ""  # which cap the file passed ("" when none)


def parse(text: str) -> Document:
    """See the module docstring."""
    root = Element("", {}, closed=True)
    if len(text) > MAX_CONFIG_CHARS:
        return Document(root, f"{len(text)} characters, over the {MAX_CONFIG_CHARS} cap")
    stack = [root]
    count = 0
    i, n = 0, len(text)
    while i < n:
        lt = text.find("<", i)
        if lt < 0:
            stack[-1].parts.append(unescape(text[i:]))
            break
        if lt > i:
            stack[-1].parts.append(unescape(text[i:lt]))
        if text.startswith("<!--", lt):
            end = text.find("-->", lt + 4)
            if end < 0:
                break
            i = end + 3
        elif text.startswith("<![CDATA[", lt):
            end = text.find("]]>", lt + 9)
            if end < 0:
                break
            stack[-1].parts.append(text[lt + 9:end])
            i = end + 3
        elif text.startswith(("<?", "<!"), lt):
            end = text.find(">", lt + 2)
            if end < 0:
                break
            i = end + 1
        elif text.startswith("</", lt):
            end = text.find(">", lt + 2)
            if end < 0:
                break
            m = _NAME.match(text, lt + 2, end)
            if m is not None:
                _close(stack, m.group(0))
            i = end + 1
        else:
            m = _NAME.match(text, lt + 1)
            if m is None:  # a lone '<' in text
                stack[-1].parts.append("<")
                i = lt + 1
                continue
            attrs, j, self_closing = _attributes(text, m.end())
            if j < 0:
                break
            count += 1
            if count > MAX_ELEMENTS:
                return Document(root, f"more than {MAX_ELEMENTS} elements")
            element = Element(m.group(0), attrs, closed=self_closing)
            stack[-1].children.append(element)
            if not self_closing:
                if len(stack) > MAX_DEPTH:
                    return Document(root, f"elements nested deeper than {MAX_DEPTH}")
                stack.append(element)
            i = j
    return Document(root)


def _attributes(text: str, j: int) -> tuple[dict[str, str], int, bool]:
    """The attributes of a start tag whose name ends at ``j``: (attributes, the index past the tag or -1 when the
    tag never ends, whether it is self-closing)."""
    attrs: dict[str, str] = {}
    while True:
        a = _ATTR.match(text, j)
        if a is not None:
            quote = a.group(2)
            end = text.find(quote, a.end())
            if end < 0:
                return attrs, -1, False
            attrs.setdefault(a.group(1), unescape(text[a.end():end]))
            j = end + 1
            continue
        e = _TAG_END.match(text, j)
        if e is not None:
            return attrs, e.end(), bool(e.group(1))
        # anything else in a tag (an attribute without a value, stray characters): the tag ends at the next '>'
        end = text.find(">", j)
        if end < 0:
            return attrs, -1, False
        return attrs, end + 1, text[end - 1] == "/"


def _close(stack: list[Element], name: str) -> None:
    """An end tag closes the innermost open element of that name; those opened inside it stay unclosed (they do
    not count).  An end tag matching nothing open is ignored.  The stack is at most MAX_DEPTH deep."""
    for k in range(len(stack) - 1, 0, -1):
        if stack[k].name == name:
            stack[k].closed = True
            del stack[k:]
            return
