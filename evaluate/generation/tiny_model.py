"""A tiny, randomly initialised causal LM with a tokenizer trained on the spot (tests, benchmarks, offline demos).

Real transformers classes with real weights (random, seeded) and a real byte-level BPE tokenizer trained with
``tokenizers`` on a few lines of code: every code path of a backend runs exactly as with a released model, only
the completions are nonsense.  Saved with ``save_pretrained`` so any backend (transformers, vLLM) loads it by path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

CODE_LINES = [
    "def add(a, b):", "    return a + b", "import os", "from typing import List, Optional",
    "class Stack:", "    def __init__(self):", "        self.items = []", "    def push(self, item):",
    "        self.items.append(item)", "    def pop(self):", "        return self.items.pop()",
    "for i in range(10):", "    print(i)", "if x is None:", "    raise ValueError('x must be set')",
    "public static void main(String[] args) {", "    System.out.println(\"hello\");", "}",
    "const total = items.reduce((a, b) => a + b, 0);", "export function parse(text: string): Node {",
    "result = utils.normalize(path, strict=True)", "with open(name, encoding='utf-8') as fh:",
    "    data = json.load(fh)", "return [x * 2 for x in values if x > 0]",
]

EOS = "<|endoftext|>"
PAD = "<pad>"


def build_tiny_model(directory: str | Path, arch: str = "llama", seed: int = 0, vocab_size: int = 400,
                     hidden: int = 64, layers: int = 2, heads: int = 4, context: int = 512,
                     init_range: float = 0.2, corpus: Sequence[str] = CODE_LINES, train_steps: int = 0,
                     special_tokens: Sequence[str] = ()) -> Path:
    """Write a tiny model + tokenizer to ``directory`` and return it.

    ``init_range`` is larger than the usual 0.02 so logits are peaked: greedy argmax then has clear winners,
    which keeps greedy outputs stable under the tiny float differences padding introduces.  ``train_steps > 0``
    fits the model a little to ``corpus`` (seeded AdamW on short windows), so that its completions look like code
    lines (newlines included) instead of random bytes.  ``special_tokens`` (e.g. a FIM family's sentinels) become
    single special tokens of the tokenizer, as in the family's released tokenizer.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD, *special_tokens],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(list(corpus) * 4, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS, bos_token=EOS, pad_token=PAD,
                                  model_max_length=context,
                                  **({"additional_special_tokens": list(special_tokens)} if special_tokens else {}))
    tok.save_pretrained(out)
    vocab = bpe.get_vocab_size()

    torch.manual_seed(seed)
    if arch == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2,
                          num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                          max_position_embeddings=context, initializer_range=init_range,
                          bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                          pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
        model = LlamaForCausalLM(cfg)
    elif arch == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=heads, n_positions=context,
                         initializer_range=init_range, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
        model = GPT2LMHeadModel(cfg)
    else:
        raise ValueError(f"unknown tiny architecture {arch!r}; use llama or gpt2")
    if train_steps > 0:
        _fit(model, tok, corpus, train_steps)
    model.eval()
    model.save_pretrained(out)
    return out


def _fit(model, tok, corpus: Sequence[str], steps: int, window: int = 96, lr: float = 3e-3) -> None:
    import torch

    ids = tok("\n".join(corpus) + "\n", return_tensors="pt").input_ids[0]
    starts = list(range(0, max(1, len(ids) - window), window // 2))
    batch = torch.stack([ids[s:s + window] for s in starts if len(ids[s:s + window]) == window])
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
