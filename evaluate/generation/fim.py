"""Fill-in-the-middle prompt templates as data: the special-token strings of each model family.

A template renders ``prefix`` and ``suffix`` (and, for repository-level prompts, the retrieved files) into the text
a model was trained on.  Each family's strings follow its documentation:

* StarCoder / StarCoder2 / Granite (StarCoder tokenizer): ``<fim_prefix>P<fim_suffix>S<fim_middle>``; SPM is
  ``<fim_prefix><fim_suffix>S<fim_middle>P`` (the bigcode Megatron SPM variant).  StarCoder2's repository format
  is ``<repo_name>R<file_sep>path\\ncode<file_sep>...``, the file being completed opening with its path inside
  the FIM prefix (StarCoder2 paper, section 5.1).
* CodeLlama: ``<PRE> P <SUF>S <MID>``, SPM ``<PRE> <SUF>S <MID> P``, end ``<EOT>`` (the text form of
  ``llama/generation.py``'s infilling encoder, whose sentencepiece prefix space becomes the space after a sentinel).
* DeepSeek-Coder: ``<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>`` (PSM only is documented).
* Qwen2.5-Coder: ``<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>``; repository format
  ``<|repo_name|>R\\n<|file_sep|>path\\ncode\\n...<|file_sep|>current_path\\n<FIM prompt>``.
* Codestral: ``[SUFFIX]S[PREFIX]P`` (mistral-common's FIM encoding: suffix first, no middle sentinel).

A user template file is JSON with the fields of ``FimTemplate`` (``psm``/``spm`` use ``{prefix}`` and
``{suffix}``; ``repo_header`` ``{repo}``; ``file_header``/``current_file_header``/``prefix_header`` ``{path}``;
``file_footer`` closes a retrieved file).  Placeholders are filled in one pass, so code holding the text
``{suffix}`` is never substituted twice.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Mapping

_PLACEHOLDER = re.compile(r"\{(prefix|suffix|repo|path)\}")


class FimOrder(str, enum.Enum):
    PSM = "psm"  # prefix, suffix, middle
    SPM = "spm"  # suffix, prefix, middle


class TemplateError(ValueError):
    pass


@dataclass(frozen=True)
class FimTemplate:
    name: str
    psm: str | None  # None: the family documents no such order
    spm: str | None
    end_tokens: tuple[str, ...]  # strings that end the middle (the end-of-middle token, EOS, other sentinels)
    sentinels: tuple[str, ...]  # the special tokens the template uses (detection reads the tokenizer for these)
    repo_header: str | None = None  # None: no repository-level format
    file_header: str = ""
    file_footer: str = ""
    current_file_header: str = ""  # before the FIM block of the file being completed (repository format only)
    prefix_header: str = ""  # at the start of the FIM prefix (repository format only)

    @property
    def has_repo_format(self) -> bool:
        return self.repo_header is not None

    def pattern(self, order: FimOrder) -> str:
        text = self.psm if order is FimOrder.PSM else self.spm
        if text is None:
            documented = [o.value for o in FimOrder if (self.psm if o is FimOrder.PSM else self.spm) is not None]
            raise TemplateError(f"the {self.name} template has no {order.value.upper()} format "
                                f"(documented: {', '.join(documented) or 'none'})")
        return text

    def render_fim(self, order: FimOrder, prefix: str, suffix: str) -> str:
        return fill(self.pattern(order), prefix=prefix, suffix=suffix)

    def render_repo(self, repo: str, files: Iterable[tuple[str, str]]) -> str:
        """The repository header and one section per ``(path, code)``, in the order given."""
        if self.repo_header is None:
            raise TemplateError(f"the {self.name} template has no repository-level format; use "
                                "--context-placement comments or none, or a template file with repo_header")
        parts = [fill(self.repo_header, repo=repo)]
        for path, code in files:
            parts.append(fill(self.file_header, path=path) + code + self.file_footer)
        return "".join(parts)

    def current_file(self, path: str) -> tuple[str, str]:
        """(text before the FIM block, text at the start of the prefix) for the file being completed."""
        return fill(self.current_file_header, path=path), fill(self.prefix_header, path=path)


def fill(pattern: str, **values: str) -> str:
    """Replace ``{name}`` placeholders in one pass (a value's own braces are left alone)."""
    def sub(m: re.Match) -> str:
        if m.group(1) not in values:
            raise TemplateError(f"placeholder {m.group(0)} has no value here")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(sub, pattern)


def _starcoder(name: str, repo: bool) -> dict[str, Any]:
    return {
        "name": name,
        "psm": "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
        "spm": "<fim_prefix><fim_suffix>{suffix}<fim_middle>{prefix}",
        "end_tokens": ["<|endoftext|>", "<file_sep>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"] if repo
        else ["<|endoftext|>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"],
        "sentinels": ["<fim_prefix>", "<fim_suffix>", "<fim_middle>"] + (["<repo_name>", "<file_sep>"] if repo else []),
        **({"repo_header": "<repo_name>{repo}", "file_header": "<file_sep>{path}\n",
            "current_file_header": "<file_sep>", "prefix_header": "{path}\n"} if repo else {}),
    }


# The families' strings (see the module docstring for the source of each).
TEMPLATES: dict[str, dict[str, Any]] = {
    "starcoder": _starcoder("starcoder", repo=False),
    "starcoder2": _starcoder("starcoder2", repo=True),
    "granite": _starcoder("granite", repo=False),
    "codellama": {
        "name": "codellama",
        "psm": "<PRE> {prefix} <SUF>{suffix} <MID>",
        "spm": "<PRE> <SUF>{suffix} <MID> {prefix}",
        "end_tokens": ["<EOT>", "</s>"],
        "sentinels": ["<PRE>", "<SUF>", "<MID>", "<EOT>"],
    },
    "deepseek-coder": {
        "name": "deepseek-coder",
        "psm": "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",
        "spm": None,
        "end_tokens": ["<｜end▁of▁sentence｜>", "<|EOT|>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"],
        "sentinels": ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"],
    },
    "qwen2.5-coder": {
        "name": "qwen2.5-coder",
        "psm": "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
        "spm": None,
        "end_tokens": ["<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>", "<|fim_prefix|>",
                       "<|fim_suffix|>", "<|fim_middle|>", "<|im_end|>"],
        "sentinels": ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>"],
        "repo_header": "<|repo_name|>{repo}\n",
        "file_header": "<|file_sep|>{path}\n",
        "file_footer": "\n",
        "current_file_header": "<|file_sep|>{path}\n",
    },
    "codestral": {
        "name": "codestral",
        "psm": None,
        "spm": "[SUFFIX]{suffix}[PREFIX]{prefix}",
        "end_tokens": ["</s>", "[SUFFIX]", "[PREFIX]", "[MIDDLE]"],
        "sentinels": ["[SUFFIX]", "[PREFIX]"],
    },
}


def template_from_dict(obj: Mapping[str, Any], where: str) -> FimTemplate:
    known = {f.name for f in fields(FimTemplate)}
    unknown = sorted(set(obj) - known)
    if unknown:
        raise TemplateError(f"{where}: unknown template field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for f in fields(FimTemplate):
        value = obj.get(f.name)
        if f.name in ("end_tokens", "sentinels"):
            if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
                raise TemplateError(f"{where}: {f.name!r} must be a list of non-empty strings")
            values[f.name] = tuple(value)
        elif f.name in ("psm", "spm", "repo_header"):
            if value is not None and not isinstance(value, str):
                raise TemplateError(f"{where}: {f.name!r} must be a string or null")
            values[f.name] = value
        else:
            if value is None and f.name != "name":
                value = ""
            if not isinstance(value, str):
                raise TemplateError(f"{where}: {f.name!r} must be a string")
            values[f.name] = value
    if values["psm"] is None and values["spm"] is None:
        raise TemplateError(f"{where}: a template needs 'psm' or 'spm'")
    for order in ("psm", "spm"):
        pattern = values[order]
        if pattern is not None and (pattern.count("{prefix}") != 1 or pattern.count("{suffix}") != 1):
            raise TemplateError(f"{where}: {order!r} must hold {{prefix}} and {{suffix}} once each")
    return FimTemplate(**values)


def builtin(name: str) -> FimTemplate:
    key = name.strip().lower()
    if key not in TEMPLATES:
        raise TemplateError(f"unknown FIM template {name!r}; choose one of {', '.join(sorted(TEMPLATES))}, "
                            "'auto', or give a template file (.json)")
    return template_from_dict(TEMPLATES[key], f"template {key}")


def load_template(spec: str, special_tokens: Iterable[str] = ()) -> FimTemplate:
    """``spec``: a family name, ``auto`` (read from the tokenizer's special tokens), or a JSON file."""
    if spec.endswith(".json") or Path(spec).is_file():
        path = Path(spec)
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TemplateError(f"cannot read FIM template file {path}: {exc}") from None
        if not isinstance(obj, dict):
            raise TemplateError(f"{path}: a template file holds one JSON object")
        obj.setdefault("name", path.stem)
        return template_from_dict(obj, str(path))
    if spec.strip().lower() == "auto":
        return detect(special_tokens)
    return builtin(spec)


def detect(special_tokens: Iterable[str]) -> FimTemplate:
    """The family whose sentinels are all among the tokenizer's special tokens; the richest match wins (StarCoder2
    over StarCoder when ``<repo_name>``/``<file_sep>`` exist)."""
    have = set(special_tokens)
    matches = [(len(t["sentinels"]), name) for name, t in TEMPLATES.items() if set(t["sentinels"]) <= have]
    if not matches:
        raise TemplateError("the tokenizer has none of the known FIM special-token sets; choose --fim-template "
                            f"({', '.join(sorted(TEMPLATES))}) or give a template file")
    best = max(n for n, _ in matches)
    # several families share StarCoder's tokens (granite): the first in TEMPLATES order with the most sentinels
    return builtin([name for n, name in matches if n == best][0])


def tokenizer_special_tokens(tok: Any) -> list[str]:
    """Special and added tokens of a Hugging Face tokenizer (``HFTokenizer.tok``), for ``detect``."""
    found: list[str] = list(getattr(tok, "all_special_tokens", []) or [])
    added = getattr(tok, "get_added_vocab", None)
    if callable(added):
        found.extend(added())
    vocab = getattr(tok, "get_vocab", None)
    if callable(vocab):  # sentencepiece families (CodeLlama) keep their sentinels in the base vocabulary
        v = vocab()
        found.extend(s for name in TEMPLATES.values() for s in name["sentinels"] if s in v or "▁" + s in v)
    return sorted(set(found))
