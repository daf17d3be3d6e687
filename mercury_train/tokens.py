"""Tokenizer training and tokenisation of the corpus into flat uint16 arrays.

``train.bin`` / ``heldout.bin``: every document's tokens followed by ``<|endoftext|>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from mercury_train.bpe import EOT_TOKEN, train_bpe
from mercury_train.corpus import iter_text

DEFAULT_VOCAB = 8192


def prepare_tokens(corpus: Path, vocab_size: int = DEFAULT_VOCAB) -> dict:
    tok = train_bpe(iter_text(corpus / "train.jsonl.gz"), vocab_size)
    (corpus / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    eot = tok.token_to_id(EOT_TOKEN)
    stats = {"vocab_size": tok.get_vocab_size()}
    for split in ("train", "heldout"):
        ids: list[np.ndarray] = []
        batch: list[str] = []
        for text in iter_text(corpus / f"{split}.jsonl.gz"):
            batch.append(text)
            if len(batch) >= 256:
                ids.extend(_encode(tok, batch, eot))
                batch = []
        ids.extend(_encode(tok, batch, eot))
        arr = np.concatenate(ids) if ids else np.zeros(0, dtype=np.uint16)
        arr.tofile(corpus / f"{split}.bin")
        stats[f"{split}_tokens"] = int(arr.size)
    (corpus / "tokens.json").write_text(json.dumps(stats, indent=2) + "\n")
    return stats


def _encode(tok: Tokenizer, texts: list[str], eot: int) -> list[np.ndarray]:
    return [np.asarray([*enc.ids, eot], dtype=np.uint16)
            for enc in tok.encode_batch(texts, add_special_tokens=False)]


def load_tokens(corpus: Path, split: str) -> np.ndarray:
    return np.fromfile(corpus / f"{split}.bin", dtype=np.uint16)


def load_tokenizer(corpus: Path) -> Tokenizer:
    return Tokenizer.from_file(str(corpus / "tokenizer.json"))
