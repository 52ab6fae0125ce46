"""ListOps (Nangia & Bowman, 2018) as Long Range Arena generates it (Tay et al., 2021; the LRA repository's
`lra_benchmarks/data/listops.py`), and what the model sees of it.

Generation, as LRA's: a node shallower than the maximum depth (10) is an operator with probability
`VALUE_P` (0.25), otherwise (and always at the maximum depth) a digit 0-9. An operator draws its argument
count (2..10), then its arguments, then itself (MAX, MIN, MED: the median truncated to an int, SM: the sum
modulo 10). LRA builds the operator as nested pairs, ((op, a1), a2) ... then (..., "]"), and renders every
pair in its own parentheses, so [MAX 2 9 4] is written `( ( ( ( [MAX 2 ) 9 ) 4 ) ] )`. A tree's length
counts its operators, "]" and digits, not the parentheses; trees with min_length < length < max_length (500
and 2000) are kept, each once (a tree is abandoned as soon as it is too long, which draws the same kept trees'
distribution in a fraction of the time). The label is the expression's value.

What the model reads (`TOKENIZATIONS`):
- "lra": what LRA's input pipeline makes of the text. tfds' Tokenizer keeps runs of alphanumeric characters
  only, so the operators lose their "[" and both "]" and the parentheses vanish: `MAX 2 9 4`. The papers'
  ListOps results were measured on this form, in which nesting is ambiguous.
- "brackets": operators and "]" kept, parentheses dropped: `[MAX 2 9 4 ]`, unambiguous, exactly as long as
  the tree's length.
"""

from __future__ import annotations

import random
import statistics
from concurrent.futures import ProcessPoolExecutor

from forecaster.errors import DataError

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")  # LRA's order: random.choice draws by position
CLOSE = "]"
PARENS = ("(", ")")
VALUE_P = 0.25
TOKENIZATIONS = ("lra", "brackets")
_CHUNK = 2000  # samples per independently seeded chunk: generation runs in parallel and stays reproducible
# Which samples a seed draws, named in the cache (`tasks`): 2 since over-long trees are abandoned.
DRAWS = 2


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


def _tree(
    rng: random.Random, depth: int, max_depth: int, max_args: int, room: int
) -> tuple[list[str], int] | None:
    """(rendered tokens, LRA length) of one node, drawing from `rng` in the order LRA's generator does; None
    as soon as its length reaches `room`: the length filter would drop it, so the rest of it is not drawn
    (short expressions are rare among LRA's trees, and drawing every long one in full took minutes)."""
    if (rng.random() if depth < max_depth else 1.0) > VALUE_P:
        return [str(rng.choice(range(10)))], 1
    count, length, arguments = rng.randint(2, max_args), 2, []
    for _ in range(count):
        argument = _tree(rng, depth + 1, max_depth, max_args, room - length)
        if argument is None or length + argument[1] >= room:
            return None
        arguments.append(argument[0])
        length += argument[1]
    operator = rng.choice(OPERATORS)
    tokens = ["("] * (len(arguments) + 1) + [operator]
    for argument in arguments:
        tokens += [*argument, ")"]
    return [*tokens, CLOSE, ")"], length


def _chunk(task: tuple[int, int, int, int, int, int, int]) -> list[str]:
    """`count` rendered trees of one chunk, each kept by LRA's length filter."""
    seed, chunk, count, min_length, max_length, max_depth, max_args = task
    rng = random.Random(f"listops-{seed}-{chunk}")
    texts: list[str] = []
    while len(texts) < count:
        tree = _tree(rng, 1, max_depth, max_args, max_length)
        if tree is not None and min_length < tree[1] < max_length:
            texts.append(" ".join(tree[0]))
    return texts


def generate(
    n: int,
    seed: int,
    *,
    min_length: int = 500,
    max_length: int = 2000,
    max_depth: int = 10,
    max_args: int = 10,
    workers: int = 1,
) -> list[dict]:
    """`n` distinct samples `{"text", "label"}` (text as LRA renders it), reproducible from `seed` whatever
    `workers` (processes) generate them."""
    if not 0 <= min_length < max_length:
        raise ValueError(f"need 0 <= min_length < max_length, got {min_length}, {max_length}")
    seen: dict[str, None] = {}
    chunk = 0
    while len(seen) < n:
        missing = n - len(seen)
        counts = [min(_CHUNK, missing - start) for start in range(0, missing, _CHUNK)]
        tasks = [(seed, chunk + index, count, min_length, max_length, max_depth, max_args)
                 for index, count in enumerate(counts)]  # fmt: skip
        chunk += len(tasks)
        if workers > 1 and len(tasks) > 1:
            with ProcessPoolExecutor(min(workers, len(tasks))) as pool:
                batches = list(pool.map(_chunk, tasks))
        else:
            batches = [_chunk(task) for task in tasks]
        for text in (text for batch in batches for text in batch):
            if len(seen) < n:
                seen.setdefault(text)
    return [{"text": text, "label": evaluate(text)} for text in seen]


def check_tokenization(tokenization: str) -> str:
    """`tokenization` if it is one of TOKENIZATIONS; DataError naming them otherwise."""
    if tokenization not in TOKENIZATIONS:
        expected = ", ".join(TOKENIZATIONS)
        raise DataError(f"unknown ListOps tokenization {tokenization!r}; expected one of {expected}")
    return tokenization


def tokens_for_model(text: str, tokenization: str) -> list[str]:
    """The tokens of a rendered tree the model reads under `tokenization` (see the module docstring)."""
    if check_tokenization(tokenization) == "lra":
        return [token.lstrip("[") for token in text.split() if token not in PARENS and token != CLOSE]
    return [token for token in text.split() if token not in PARENS]
