"""From a finished run to a verdict."""

from __future__ import annotations

import signal

from benchsmith import runner
from benchsmith.evaluate.sandbox.records import ExecResult, Verdict


def verdict_of(res: runner.RunResult, oom_on_sigkill: bool = False) -> ExecResult:
    rc = res.returncode
    tail = res.stderr[-2000:]
    if res.timed_out:
        verdict, detail = Verdict.TIMEOUT, "wall-clock timeout"
    elif rc == 125 and "sandbox setup failed" in tail:
        verdict, detail = Verdict.ERROR, _last_line(tail)
    elif rc == 0:
        verdict, detail = Verdict.PASSED, ""
    elif res.truncated:
        verdict, detail = Verdict.OUTPUT_LIMIT, "output over the cap"
    elif rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        verdict, detail = Verdict.TIMEOUT, "CPU time limit"
    elif rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in tail:
        verdict, detail = Verdict.OUTPUT_LIMIT, "file size limit"
    elif res.extra.get("oom"):
        verdict, detail = Verdict.MEMORY, "memory limit of the process tree (OOM-killed in its cgroup)"
    elif "MemoryError" in tail or "Cannot allocate memory" in tail:
        verdict, detail = Verdict.MEMORY, "memory limit"
    elif oom_on_sigkill and rc in (-signal.SIGKILL, 128 + signal.SIGKILL):
        verdict, detail = Verdict.MEMORY, "killed (out of memory in the container)"
    else:
        verdict, detail = Verdict.FAILED, _last_line(tail) or f"exit status {rc}"
    return ExecResult(verdict=verdict, returncode=rc, stdout=res.stdout, stderr=res.stderr,
                      duration=res.duration, detail=detail)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""

