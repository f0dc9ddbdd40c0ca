"""HumanExtension scoring (``benchsmith score humanext``): ``command`` (the CLI), ``inputs`` (variants and
predictions), ``plan`` (each sample's program by the builder<->scorer contract in
:mod:`benchsmith.evaluate.humanext.program`, deduplicated, judged or run in the sandbox), ``judge`` / ``judge_values`` /
``judge_harness`` (verdicts decided outside the program; the harness runs inside the sandbox and is read as a file),
``results`` (the numbers), ``passk``, ``style`` (how a target uses its auxiliary), ``report`` (report.md, figures)."""
