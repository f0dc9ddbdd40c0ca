"""Prompt shapes: base models (plain code), CodeLlama-Instruct (the paper's two-turn form), any chat template.

Whatever the style, a variant's *program prefix* is the same plain code: imports, the context functions, the
target's signature and docstring.  For base models the prompt *is* that code.  For instruction-tuned models the
prompt wraps it in turns (each context function is an earlier turn: a request quoting its declaration and
docstring, answered with its code), and the last turn's answer opens with the target's signature, so the model's
completion is again the target's body:

    program = program_prefix + completion + "\\n" + tests

Step-by-step stage 2 prompts are templates holding the marker ``{auxiliary}`` exactly once; it stands for the
auxiliary *code* the model wrote in stage 1 (stage-1 program_prefix + its truncated completion, right-stripped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence
from benchsmith.enums import StrEnum
# fill_auxiliary: stage-2 records name it here in their extra["fill"] text, so the name stays importable here
from benchsmith.evaluate.humanext.program import AUXILIARY_MARKER, fill_auxiliary  # noqa: F401

BASE_STOP = ["\ndef", "\nclass", "\nif", "\n#"]
INSTRUCT_STOP = ["[/PYTHON]"]
CHAT_STOP = ["```"]


class PromptStyle(StrEnum):
    BASE = "base"
    CODELLAMA_INSTRUCT = "codellama-instruct"
    CHAT = "chat"  # a tokenizer's own chat template (--tokenizer PATH)


@dataclass(frozen=True)
class Function:
    """A function as a prompt needs it: code, a one-line declaration and the docstring text (may be None)."""

    code: str  # for the target: signature + docstring only
    declaration: str
    docstring: str | None


@dataclass(frozen=True)
class Rendered:
    prompt: str
    program_prefix: str
    stop: list[str]


def code_block(imports: Sequence[str], functions: Sequence[str], tail: str | None = None) -> str:
    """Imports, then functions, separated by two blank lines; ends with a newline."""
    blocks = []
    if imports:
        blocks.append("\n".join(imports))
    blocks.extend(f.rstrip("\n") for f in functions)
    if tail is not None:
        blocks.append(tail.rstrip("\n"))
    return "\n\n\n".join(blocks) + "\n"


class Formatter:
    """Turns (imports, context functions, target) into prompts for one style."""

    def __init__(self, style: PromptStyle = PromptStyle.BASE, tokenizer: Any = None) -> None:
        self.style = PromptStyle(style)
        if self.style is PromptStyle.CHAT and tokenizer is None:
            raise ValueError("--prompt-style chat needs --tokenizer PATH (a tokenizer with a chat template)")
        self.tokenizer = tokenizer

    @property
    def stop(self) -> list[str]:
        return {PromptStyle.BASE: BASE_STOP, PromptStyle.CODELLAMA_INSTRUCT: INSTRUCT_STOP,
                PromptStyle.CHAT: CHAT_STOP}[self.style]

    # -- one-shot prompts ------------------------------------------------------------------------------------
    def render(self, imports: Sequence[str], context: Sequence[Function], target: Function) -> Rendered:
        program = code_block(imports, [f.code for f in context], target.code)
        if self.style is PromptStyle.BASE:
            return Rendered(program, program, list(self.stop))
        prompt = self._conversation(imports, context, target)
        return Rendered(prompt, program, list(self.stop))

    # -- step by step ---------------------------------------------------------------------------------------
    def stage1(self, imports: Sequence[str], auxiliary: Function) -> Rendered:
        """The auxiliary's signature alone: the model writes the auxiliary first."""
        return self.render(imports, [], auxiliary)

    def stage2(self, auxiliary: Function, target: Function) -> tuple[str, str]:
        """(prompt template, program template), each holding ``{auxiliary}`` once."""
        program = AUXILIARY_MARKER + "\n\n\n" + target.code.rstrip("\n") + "\n"
        if self.style is PromptStyle.BASE:
            return program, program
        written = Function(AUXILIARY_MARKER, auxiliary.declaration, auxiliary.docstring)
        return self._conversation((), [written], target), program

    # -- instruction formats ----------------------------------------------------------------------------------
    def _conversation(self, imports: Sequence[str], context: Sequence[Function], target: Function) -> str:
        # Turns: one per context function (request + its code as the answer), then the target's request; the
        # first code block carries the imports.
        turns: list[tuple[str, str]] = []
        for i, fn in enumerate(context):
            code = code_block(imports if i == 0 else (), [fn.code]).rstrip("\n")
            turns.append((self._request(fn, helpers=0), code))
        last = self._request(target, helpers=len(context))
        opening = code_block(imports if not context else (), [], target.code)
        if self.style is PromptStyle.CODELLAMA_INSTRUCT:
            # The paper's CodeLlama-Instruct form; BOS is left to the tokenizer, "</s><s>" separates turns.
            text = ""
            for request, code in turns:
                text += f"[INST] {request}\n[/INST]\n[PYTHON]\n{code}\n[/PYTHON]\n</s><s>"
            return text + f"[INST] {last}\n[/INST]\n[PYTHON]\n{opening}"
        messages: list[dict[str, str]] = []
        for request, code in turns:
            messages.append({"role": "user", "content": request})
            messages.append({"role": "assistant", "content": f"```python\n{code}\n```"})
        messages.append({"role": "user", "content": last})
        head = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return head + "```python\n" + opening

    def _request(self, fn: Function, helpers: int) -> str:
        if self.style is PromptStyle.CODELLAMA_INSTRUCT:
            tag = "Your code should start with a [PYTHON] tag and end with a [/PYTHON] tag."
        else:
            tag = "Your code should start with a ```python tag and end with a ``` tag."
        text = f"Write a Python function `{fn.declaration}` to solve the following problem:\n"
        text += (fn.docstring or "").strip() + "\n" + tag
        if helpers == 1:
            text += "\nYou can use the above function whenever you needed."
        elif helpers > 1:
            text += "\nYou can use the above functions whenever you needed."
        return text


def load_tokenizer(path: str) -> Any:
    """A Hugging Face tokenizer with a chat template (transformers imported only here)."""
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("--tokenizer needs the transformers extra: pip install 'benchsmith[transformers]'") from exc
    tok = AutoTokenizer.from_pretrained(path)
    if not getattr(tok, "chat_template", None):
        raise ValueError(f"--tokenizer {path}: this tokenizer has no chat template; use --prompt-style base or "
                         "codellama-instruct")
    return tok
