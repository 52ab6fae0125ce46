"""ListOps (Nangia & Bowman, 2018) as generated for Long Range Arena (Tay et al., 2021).

Nested lists of the operators MAX, MIN, MED (median, truncated to an int) and SM (sum modulo 10) over the
digits 0-9, e.g. `( [MAX 2 9 ( [MIN 4 7 ] ) 0 ] )`; the label is the value of the expression. The tree grammar
follows the LRA generator: a node below the maximum depth (10) is an operator with probability 0.25 (the LRA
code's `VALUE_P`; otherwise, and always at the maximum depth, a digit) with 2..10 arguments. Each operator is
rendered with its own pair of parentheses and brackets; only trees whose rendered length in whitespace tokens
lies strictly between `min_length` and `max_length` are kept, so every sample fits a 2000-token model.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable

OPERATORS = ("[MAX", "[MIN", "[MED", "[SM")
CLOSE = "]"
PARENS = ("(", ")")


def _apply(operator: str, values: list[int]) -> int:
    if operator == "[MAX":
        return max(values)
    if operator == "[MIN":
        return min(values)
    if operator == "[MED":
        return int(statistics.median(values))
    if operator == "[SM":
        return sum(values) % 10
    raise ValueError(f"unknown ListOps operator {operator!r}; expected one of {', '.join(OPERATORS)}")


def evaluate(text: str) -> int:
    """Value of a ListOps expression (parentheses optional, brackets required), by a stack machine."""
    stack: list[tuple[str, list[int]]] = []
    result: int | None = None
    for position, token in enumerate(text.split()):
        if token in PARENS:
            continue
        if token in OPERATORS:
            stack.append((token, []))
        elif token == CLOSE:
            if not stack:
                raise ValueError(f"unbalanced ']' at token {position} of ListOps expression")
            operator, values = stack.pop()
            if not values:
                raise ValueError(f"operator {operator} closed without arguments at token {position}")
            value = _apply(operator, values)
            if stack:
                stack[-1][1].append(value)
            else:
                result = value
        elif token.isdigit() and len(token) == 1:
            if stack:
                stack[-1][1].append(int(token))
            elif result is None:
                result = int(token)
            else:
                raise ValueError(f"digit {token} after the end of the expression at token {position}")
        else:
            raise ValueError(f"unexpected token {token!r} at position {position} of ListOps expression")
    if stack or result is None:
        raise ValueError("incomplete ListOps expression: an operator is not closed with ']'")
    return result


class _TooLong(Exception):
    """Raised inside generation once a tree can no longer fit; the tree is rejected either way."""


def _grow(rng: random.Random, depth: int, max_depth: int, max_args: int, out: list[str], budget: int) -> None:
    if depth >= max_depth or rng.random() > 0.25:
        out.append(str(rng.randrange(10)))
    else:
        n_args = rng.randint(2, max_args)
        operator = rng.choice(OPERATORS)
        out += ["(", operator]
        for _ in range(n_args):
            _grow(rng, depth + 1, max_depth, max_args, out, budget)
        out += [CLOSE, ")"]
    if len(out) >= budget:
        raise _TooLong


def generate(
    n: int,
    seed: int,
    *,
    min_length: int = 500,
    max_length: int = 2000,
    max_depth: int = 10,
    max_args: int = 10,
) -> list[dict]:
    """`n` samples `{"text", "label"}` with min_length < tokens < max_length, reproducible from `seed`."""
    if not 0 <= min_length < max_length:
        raise ValueError(f"need 0 <= min_length < max_length, got {min_length}, {max_length}")
    rng = random.Random(seed)
    samples: list[dict] = []
    while len(samples) < n:
        tokens: list[str] = []
        try:
            _grow(rng, 1, max_depth, max_args, tokens, max_length)
        except _TooLong:
            continue
        if len(tokens) > min_length:
            text = " ".join(tokens)
            samples.append({"text": text, "label": evaluate(text)})
    return samples


def label_counts(samples: Iterable[dict]) -> list[int]:
    """How many samples have each label 0-9 (the majority-class rate is max / total)."""
    counts = [0] * 10
    for sample in samples:
        counts[sample["label"]] += 1
    return counts
