"""JSON type trees and the Hugging Face ``Features`` they become.

A type tree: ``"string" | "int64" | "float64" | "bool" | "null" | ("list", tree) | ("dict", {key: tree})``.  Trees
of several records merge (an int column that meets a float becomes float; null fits anything), a clash names
the field; ``conform`` fills missing keys and widens ints so every row fits the merged Features.
"""

from __future__ import annotations

from typing import Any


class SchemaError(ValueError):
    pass


_SCALARS = {str: "string", bool: "bool", int: "int64", float: "float64"}


def type_of(value: Any, where: str = "") -> Any:
    if value is None:
        return "null"
    for py, name in _SCALARS.items():
        if type(value) is py:
            return name
    if isinstance(value, list):
        tree: Any = "null"
        for i, item in enumerate(value):
            tree = merge_types(tree, type_of(item, f"{where}[]"), f"{where}[]")
        return ("list", tree)
    if isinstance(value, dict):
        return ("dict", {k: type_of(v, f"{where}.{k}" if where else k) for k, v in value.items()})
    raise SchemaError(f"field {where or '<record>'}: unsupported JSON value {type(value).__name__}")


def merge_types(a: Any, b: Any, where: str = "") -> Any:
    if a == "null":
        return b
    if b == "null" or a == b:
        return a
    if a in ("int64", "float64") and b in ("int64", "float64"):
        return "float64"  # JSON writes 1.0 as 1 in some producers: a number column is a float column
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "list":
        return ("list", merge_types(a[1], b[1], f"{where}[]"))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "dict":
        keys = dict(a[1])
        for k, v in b[1].items():
            sub = f"{where}.{k}" if where else k
            keys[k] = merge_types(keys[k], v, sub) if k in keys else v
        return ("dict", keys)
    raise SchemaError(f"field {where or '<record>'} is {_describe(b)} here but {_describe(a)} elsewhere")


def _describe(tree: Any) -> str:
    return tree if isinstance(tree, str) else ("a list" if tree[0] == "list" else "an object")


def _feature(tree: Any):
    import datasets

    if isinstance(tree, str):
        # A field that is null everywhere is typed string: a nullable string reads back as None.
        return datasets.Value("string" if tree == "null" else tree)
    if tree[0] == "list":
        return [_feature(tree[1])]
    return {k: _feature(v) for k, v in tree[1].items()}


def features_for(tree: Any):
    import datasets

    if not (isinstance(tree, tuple) and tree[0] == "dict"):
        raise SchemaError("records must be JSON objects")
    return datasets.Features(_feature(tree))


def conform(value: Any, tree: Any) -> Any:
    """Fill missing keys with None and widen ints where the schema says float, so every row fits the Features."""
    if value is None:
        return None
    if tree == "float64" and type(value) is int:
        return float(value)
    if isinstance(tree, tuple) and tree[0] == "list":
        return [conform(v, tree[1]) for v in value]
    if isinstance(tree, tuple) and tree[0] == "dict":
        return {k: conform(value.get(k), sub) for k, sub in tree[1].items()}
    return value
