"""benchsmith: build code-LLM benchmarks (CrossCodeEval, HumanExtension) from real code and evaluate models."""

__version__ = "0.1.0"
