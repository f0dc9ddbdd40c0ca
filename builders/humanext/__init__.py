"""HumanExtension builder: pairs (auxiliary + target functions) -> every prompt variant of the study.

Modules: ``sources`` (released JSON, hub, own JSONL, HumanEval pool), ``render`` (placeholder templates),
``perturb`` (auxiliary perturbations on source text), ``settings`` (variants per setting), ``prompts`` (base,
CodeLlama-Instruct, chat templates), ``validate`` (sandboxed reference runs),
``build`` (files and report), ``cli``.

Contract with the scorer (``benchsmith score humanext``), for every record of ``variants.jsonl``, in one module both
import (:mod:`benchsmith.evaluate.humanext.program`)::

    program = record.extra["program_prefix"] + truncated_completion + "\\n" + record.tests + "\\n"

``tests`` is the released ``check``/``test_check`` text and already ends with the call that runs it
(``extra["test_entry"]``, e.g. ``test_check()``), so the program needs nothing appended.  For base-model
prompts ``program_prefix == prompt``.  Step-by-step stage-2 records hold ``template``/``extra["program_template"]``
instead; fill them with :func:`benchsmith.evaluate.humanext.program.fill_auxiliary` (see :func:`build.variant_program`).
"""
