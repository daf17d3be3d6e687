"""Corpus preparation, tokenizer training and masked-diffusion training for the embedded model."""
