"""Byte-level BPE tokenizer training (the `tokenizers` library) with the sampler's specials."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

PAD_TOKEN = "<|pad|>"
MASK_TOKEN = "<|mask|>"
EOT_TOKEN = "<|endoftext|>"
# Order fixes their ids (0, 1, 2) in every tokenizer we train; code still resolves them by name.
SPECIAL_TOKENS = [PAD_TOKEN, MASK_TOKEN, EOT_TOKEN]


def train_bpe(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok
