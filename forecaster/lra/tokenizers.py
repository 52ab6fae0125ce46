"""Tokenizers for the LRA text tasks: id 0 is padding in both, so `tokens != 0` is the padding mask."""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

from forecaster.errors import DataError
from forecaster.lra.listops import CLOSE, OPERATORS, tokens_for_model

PAD_ID = 0


class _Tokenizer(abc.ABC):
    vocab_size: int

    @abc.abstractmethod
    def encode(self, text: str, max_length: int) -> np.ndarray:
        """(max_length,) int64 ids, padded with PAD_ID or truncated."""

    def encode_batch(self, texts: Sequence[str], max_length: int) -> np.ndarray:
        """(len(texts), max_length) int64 ids."""
        return np.array([self.encode(text, max_length) for text in texts], dtype=np.int64).reshape(
            -1, max_length
        )


class ListOpsTokenizer(_Tokenizer):
    """ListOps as the model reads it under a tokenization of `listops.TOKENIZATIONS` ("lra": LRA's input
    pipeline, operators and digits only; "brackets": "]" kept too), from the text as LRA renders it."""

    def __init__(self, tokenization: str = "lra") -> None:
        self.tokenization = tokenization
        every_token = " ".join([*OPERATORS, CLOSE, *(str(digit) for digit in range(10))])
        self.vocabulary = ("<pad>", *tokens_for_model(every_token, tokenization))
        self._ids = {token: index for index, token in enumerate(self.vocabulary)}
        self.vocab_size = len(self.vocabulary)

    def encode(self, text: str, max_length: int, truncate: bool = False) -> np.ndarray:
        """Token ids padded with 0 to `max_length`; DataError on an unknown token, and on a text longer than
        max_length unless `truncate` (what LRA does with the official files)."""
        tokens = tokens_for_model(text, self.tokenization)
        if len(tokens) > max_length and not truncate:
            raise DataError(f"ListOps expression has {len(tokens)} tokens, more than max_length={max_length}")
        tokens = tokens[:max_length]
        ids = np.zeros(max_length, dtype=np.int64)
        for position, token in enumerate(tokens):
            if token not in self._ids:
                raise DataError(
                    f"unknown ListOps token {token!r} at position {position}; expected one of "
                    f"{' '.join(self.vocabulary[1:])}"
                )
            ids[position] = self._ids[token]
        return ids

    def decode(self, ids: np.ndarray) -> str:
        return " ".join(self.vocabulary[i] for i in ids if i != PAD_ID)


class ByteTokenizer(_Tokenizer):
    """UTF-8 bytes shifted by one (ids 1..256), truncated to `max_length` as in the LRA byte-level tasks."""

    vocab_size = 257

    def encode(self, text: str, max_length: int) -> np.ndarray:
        raw = np.frombuffer(text.encode("utf-8")[:max_length], dtype=np.uint8).astype(np.int64) + 1
        return np.pad(raw, (0, max_length - raw.size))

    def decode(self, ids: np.ndarray) -> str:
        return bytes(int(i) - 1 for i in ids if i != PAD_ID).decode("utf-8", errors="replace")
