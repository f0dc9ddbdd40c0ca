"""The OpenAI-compatible HTTP backend against a real HTTP server started here.

The server (``http.server`` in a thread) stands for a real ``/v1/completions`` endpoint such as vLLM's OpenAI
server: it speaks the same JSON (a list of prompts in, ``n`` choices per prompt out, ``choices[i].index`` =
prompt * n + sample), answers in a scrambled choice order, applies ``stop`` like a server does, and can be told to
fail with a status code first, so batching, ordering, retries and errors are exercised over real sockets.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("requests", reason="the openai extra (requests) is not installed")

from benchsmith.cli import main  # noqa: E402
from benchsmith.evaluate.generation.base import GenerationError, GenerationRequest, create_backend  # noqa: E402
from tests.completion_server import CompletionServer, prompts_of  # noqa: E402


def completion_for(prompt: str, sample: int, seed) -> str:
    """The server's deterministic 'model': echo the prompt's tail, the sample index and seed, then more lines."""
    return f" <{prompt[-6:]}|s{sample}|seed{seed}>\nnext line\ndef other():"


class Server(CompletionServer):
    def __init__(self) -> None:
        self.fail_next: list[int] = []  # status codes to answer before succeeding
        super().__init__(self.respond)

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        if self.fail_next:
            return self.fail_next.pop(0), {"error": {"message": "try again later"}}
        if body.get("max_tokens", 0) > 1000:
            return 400, {"error": {"message": "max_tokens too large"}}
        n = body.get("n", 1)
        choices = []
        for p_i, prompt in enumerate(prompts_of(body)):
            for s in range(n):
                text = completion_for(prompt, s, body.get("seed"))
                for stop in body.get("stop") or []:
                    cut = text.find(stop)
                    text = text[:cut] if cut >= 0 else text
                choices.append({"index": p_i * n + s, "text": text, "finish_reason": "stop"})
        choices.reverse()  # servers may answer out of order; the index is what counts
        return 200, {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                     "choices": choices, "usage": {"completion_tokens": 3 * len(choices)}}


@pytest.fixture
def server():
    with Server() as s:
        yield s


def test_batches_prompts_and_keeps_order(server):
    backend = create_backend("openai", "tiny-code", base_url=server.url, batch_size=3, backoff=0)
    prompts = [f"prompt number {i:02d}" for i in range(7)]
    results = backend.generate([GenerationRequest(p, max_new_tokens=20, n=2, temperature=0.5, seed=9,
                                                  stop=("\ndef",)) for p in prompts])
    assert [len(b["prompt"]) for b in server.bodies] == [3, 3, 1]  # lists of prompts, batch_size per call
    assert server.bodies[0]["n"] == 2 and server.bodies[0]["max_tokens"] == 20 and server.bodies[0]["seed"] == 9
    for p, r in zip(prompts, results):
        assert r.texts == [completion_for(p, s, 9).split("\ndef")[0] for s in range(2)]
    assert backend.stats["generated_tokens"] == 3 * 14


def test_all_stops_are_applied_even_beyond_the_api_limit(server):
    backend = create_backend("openai", "m", base_url=server.url, backoff=0)
    stops = ("\x01", "\x02", "\x03", "\x04", "\nnext")  # the API takes 4; the fifth is applied locally
    res = backend.generate([GenerationRequest("abc", stop=stops)])[0]
    assert len(server.bodies[0]["stop"]) == 4 and res.texts == [" <abc|s0|seedNone>"]


def test_retries_transient_errors_then_succeeds(server):
    server.fail_next = [503, 429]
    backend = create_backend("openai", "m", base_url=server.url, backoff=0)
    res = backend.generate([GenerationRequest("hello")])[0]
    assert res.texts[0].startswith(" <hello|s0") and backend.stats["retries"] == 2 and len(server.bodies) == 3


def test_gives_up_after_max_retries(server):
    server.fail_next = [500] * 10
    backend = create_backend("openai", "m", base_url=server.url, backoff=0, max_retries=2)
    with pytest.raises(GenerationError, match="giving up after 3 attempts; last error: HTTP 500"):
        backend.generate([GenerationRequest("hello")])


def test_client_errors_are_reported_not_retried(server):
    backend = create_backend("openai", "m", base_url=server.url, backoff=0)
    with pytest.raises(GenerationError, match="HTTP 400.*max_tokens too large"):
        backend.generate([GenerationRequest("hello", max_new_tokens=5000)])
    assert len(server.bodies) == 1


def test_unreachable_server_is_a_clear_error():
    backend = create_backend("openai", "m", base_url="http://127.0.0.1:9/v1", backoff=0, max_retries=1, timeout=2)
    with pytest.raises(GenerationError, match="ConnectionError"):
        backend.generate([GenerationRequest("hello")])


def test_api_key_is_sent(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    create_backend("openai", "m", base_url=server.url).generate([GenerationRequest("x")])
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_generate_cli_over_http_with_cache(server, tmp_path):
    rows = [{"task_id": f"t{i}", "prompt": f"def f{i}():\n", "stop": ["\nnext"]} for i in range(3)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input",
            str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out.jsonl"), "--cache", str(tmp_path / "c"), "-q"]
    assert main(args) == 0
    preds = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert preds == [{"task_id": f"t{i}", "pred": f" <f{i}():\n|s0|seed0>"} for i in range(3)]
    calls = len(server.bodies)
    assert main(args) == 0 and len(server.bodies) == calls  # the rerun came from the cache
