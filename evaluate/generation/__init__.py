"""Text generation: ``base`` (requests, results, the ``GenerationBackend`` interface, its lazy registry and the
request cache), the backends ``hf`` / ``openai`` / ``vllm``, ``prompting`` (prompt assembly within token budgets),
``truncation`` (the one stop-sequence cutter and code extraction), ``command`` (``generate``)."""
