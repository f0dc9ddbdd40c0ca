"""Stop-sequence truncation from the end of the prompt and code-block extraction for chat answers."""

from __future__ import annotations

from benchsmith.evaluate.generation.truncation import (code_blocks, defines_function, extract_code, remove_function,
                                             strip_prompt, truncate)

STOP = ["\ndef", "\nclass", "\nif", "\n#"]


def test_cut_at_the_earliest_stop_sequence():
    completion = "    return x + 1\n\n\nif __name__ == '__main__':\n    print(f(1))\ndef g():\n    pass\n"
    assert truncate(completion, STOP) == "    return x + 1\n\n"


def test_no_stop_keeps_everything_and_empty_stops_are_ignored():
    assert truncate("    return 1\n", STOP) == "    return 1\n"
    assert truncate("    return 1\n", ["", "\nclass"]) == "    return 1\n"


def test_stop_inside_the_prompt_does_not_count():
    prompt = "import math\ndef f(x):\n    '''doc'''\n"
    echoed = prompt + "    return math.sqrt(x)\ndef other():\n    pass\n"
    assert truncate(echoed, STOP, prompt=prompt) == "    return math.sqrt(x)"
    # without the prompt given, the echo's own "\ndef f" would cut everything
    assert truncate(echoed, STOP) == "import math"
    assert strip_prompt("abc", "xyz") == "abc"


def test_stop_at_position_zero_gives_empty_completion():
    assert truncate("\ndef g():\n    pass", STOP) == ""


def test_chat_stop_sequence():
    assert truncate("    return 2\n```\nThis function returns two.", ["```"]) == "    return 2\n"


ANSWER = """Sure! First a helper:

```python
def helper(x):
    return x * 2
```

And the function you asked for:

```python
from typing import List

def target(xs: List[int]) -> int:
    return sum(helper(x) for x in xs)
```

Hope this helps.
"""


def test_extract_the_block_that_defines_the_entry_point():
    code = extract_code(ANSWER, "target")
    assert code.startswith("from typing import List\n\ndef target(")
    assert "Hope" not in code and "```" not in code
    assert extract_code(ANSWER).startswith("def helper(")  # without a name: the first Python block


def test_untagged_unterminated_and_other_language_blocks():
    assert extract_code("```\ndef f():\n    return 1\n```", "f") == "def f():\n    return 1\n"
    assert extract_code("Here:\n```python\ndef f():\n    return 1\n", "f") == "def f():\n    return 1\n"
    text = "```bash\npip install x\n```\n```py\ndef f():\n    pass\n```"
    assert extract_code(text) == "def f():\n    pass\n"
    assert extract_code("def f():\n    return 3\n", "f") == "def f():\n    return 3\n"  # bare code
    assert [tag for tag, _ in code_blocks(text)] == ["bash", "py"]


def test_longer_fences_may_contain_shorter_ones():
    text = "````python\ns = '''\n```\n'''\ndef f():\n    return s\n````\n"
    assert "def f()" in extract_code(text, "f")


def test_defines_and_remove_function():
    prefix = "import math\n\n\ndef aux(x):\n    return x\n\n\ndef target(x):\n    \"\"\"Doc.\"\"\"\n"
    assert defines_function(prefix, "target") and not defines_function("    def target(x): pass", "target")
    stripped = remove_function(prefix, "target")
    assert "def target" not in stripped and "def aux(x):\n    return x" in stripped
    assert remove_function(prefix, "missing") == prefix
    # a later top-level statement survives
    assert remove_function("def t():\n    pass\nX = 1\n", "t") == "X = 1\n"
