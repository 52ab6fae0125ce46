"""LRA data: the ListOps grammar and evaluator, tokenizers, the Pathfinder generator, release-file readers."""

from __future__ import annotations

import csv
import inspect
import random
import statistics

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage, stats

from forecaster.errors import DataError
from forecaster.lra import listops, pathfinder, readers
from forecaster.lra.tasks import load_task
from forecaster.lra.tokenizers import ByteTokenizer, ListOpsTokenizer

OPERATIONS = {
    "[MAX": max,
    "[MIN": min,
    "[MED": lambda values: int(statistics.median(values)),
    "[SM": lambda values: sum(values) % 10,
}


def _tree(text: str) -> list:
    """Independent oracle: parse into nested [operator, arg, ...] lists by recursive descent."""
    tokens = [t for t in text.split() if t not in ("(", ")")]
    position = 0

    def node():
        nonlocal position
        token = tokens[position]
        position += 1
        if token.isdigit():
            return int(token)
        children = []
        while tokens[position] != "]":
            children.append(node())
        position += 1
        return [token, *children]

    tree = node()
    assert position == len(tokens)
    return tree


def _pairs(tokens: list[str]):
    """Independent oracle of LRA's rendering: `( left right )` pairs all the way down, every pair in its own
    parentheses; returns the nested tuples LRA's generator builds."""
    token = tokens.pop(0)
    if token != "(":
        return int(token) if token.isdigit() else token
    left, right = _pairs(tokens), _pairs(tokens)
    assert tokens.pop(0) == ")"
    return (left, right)


def _pair_value(pair):
    """LRA's own reading of the pairs: (op, v) opens a function, (f, v) adds an argument, (f, ']') applies."""
    if not isinstance(pair, tuple):
        return pair
    left, right = _pair_value(pair[0]), _pair_value(pair[1])
    if isinstance(left, str):  # an operator
        return (left, [right])
    if right == "]":
        operator, values = left
        return int(np.median(values)) if operator == "[MED" else OPERATIONS[operator](values)
    return (left[0], [*left[1], right])


def _value(tree) -> int:
    return tree if isinstance(tree, int) else OPERATIONS[tree[0]]([_value(c) for c in tree[1:]])


def _depth(tree) -> int:
    return 0 if isinstance(tree, int) else 1 + max(_depth(c) for c in tree[1:])


def _arities(tree) -> list[int]:
    if isinstance(tree, int):
        return []
    return [len(tree) - 1] + [a for c in tree[1:] for a in _arities(c)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("( [MAX 2 9 ] )", 9),
        ("[MIN 3 ( [MAX 1 7 ] ) 5 ]", 3),
        ("[MED 1 2 3 4 ]", 2),  # median 2.5, truncated to an int as in LRA
        ("[MED 9 0 4 ]", 4),
        ("[SM 5 6 7 ]", 8),
        ("( [SM ( [MAX 9 9 ] ) ( [MIN 8 1 ] ) ] )", 0),
        ("[MAX [MIN 4 [SM 7 6 ] ] [MED 1 1 8 ] 0 ]", 3),  # nested without parentheses
        ("7", 7),
    ],
)
def test_evaluator_on_hand_written_expressions(text, value):
    assert listops.evaluate(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[MAX 1 2", "not closed"),
        ("[MAX 1 ] ]", "unbalanced"),
        ("[FOO 1 ]", "unexpected token"),
        ("[SM ]", "without"),
    ],
)
def test_evaluator_rejects_malformed_expressions(text, message):
    with pytest.raises(ValueError, match=message):
        listops.evaluate(text)


def test_thousand_generated_samples_follow_lras_rendering_length_and_labels():
    samples = listops.generate(1000, seed=0, workers=2)
    assert len({sample["text"] for sample in samples}) == 1000  # distinct, as LRA keeps a set
    for sample in samples:
        text = sample["text"]
        tokens = text.split()
        pairs = _pairs(list(tokens))
        tree = _tree(text)
        assert sample["label"] == _value(tree) == _pair_value(pairs)
        assert _depth(tree) <= 9  # the root is depth 1 and nodes at depth 10 are always digits
        assert min(_arities(tree)) >= 2 and max(_arities(tree)) <= 10
        # every (operator, argument) pair and the closing one in their own parentheses: k + 1 pairs
        assert text.count("(") == text.count(")") == sum(arity + 1 for arity in _arities(tree))
        length = sum(token not in ("(", ")") for token in tokens)  # LRA counts operators, "]" and digits
        assert 500 < length < 2000
        assert len(listops.tokens_for_model(text, "brackets")) == length
        assert len(listops.tokens_for_model(text, "lra")) == length - text.count("]")
    counts = [sum(sample["label"] == label for sample in samples) for label in range(10)]
    assert sum(counts) == 1000 and min(counts) > 0  # every class occurs
    assert 0.14 < max(counts) / 1000 < 0.2  # LRA's majority class is about 17%


def _drawn_in_full(rng: random.Random, depth: int, max_depth: int) -> int:
    """The LRA length of one tree drawn to its end by LRA's rules, however long (the reference sampler)."""
    if depth >= max_depth or rng.random() > listops.VALUE_P:
        rng.choice(range(10))
        return 1
    length = 2 + sum(_drawn_in_full(rng, depth + 1, max_depth) for _ in range(rng.randint(2, 10)))
    rng.choice(listops.OPERATORS)
    return length


def test_abandoning_long_trees_keeps_the_distribution_of_the_kept_ones():
    """Trees kept by the length filter from full draws and from draws abandoned once too long: the lengths'
    distributions agree (two-sample Kolmogorov-Smirnov at depth 5, where full draws stay cheap)."""
    rng, full = random.Random(1), []
    while len(full) < 3000:
        length = _drawn_in_full(rng, 1, 5)
        if 4 < length < 40:
            full.append(length)
    task = (0, 0, 3000, 4, 40, 5, 10)  # seed, chunk, count, min and max length, max depth and arguments
    abandoned = [sum(token not in ("(", ")") for token in text.split()) for text in listops._chunk(task)]
    assert stats.ks_2samp(full, abandoned).pvalue > 0.001  # `_chunk`: repeats kept, as in `full`
    assert stats.ks_2samp(full, [length + 4 for length in abandoned]).pvalue < 1e-6  # the test can tell


def test_generation_does_not_depend_on_the_number_of_workers():
    assert listops.generate(30, seed=5, min_length=20, max_length=200, workers=1) == listops.generate(
        30, seed=5, min_length=20, max_length=200, workers=2
    )


def test_generation_is_seeded():
    assert listops.generate(5, seed=3) == listops.generate(5, seed=3)
    assert listops.generate(5, seed=3) != listops.generate(5, seed=4)


def test_short_expressions_on_request():
    samples = listops.generate(50, seed=1, min_length=20, max_length=100)
    assert all(20 < len(listops.tokens_for_model(s["text"], "brackets")) < 100 for s in samples)


def test_listops_tokenizers_read_what_lra_and_the_bracket_form_keep():
    text = "( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )"
    official, brackets = ListOpsTokenizer("lra"), ListOpsTokenizer("brackets")
    assert official.decode(official.encode(text, 16)) == "MAX 2 MIN 4 7 0"  # tfds keeps alphanumeric runs
    assert brackets.decode(brackets.encode(text, 16)) == "[MAX 2 [MIN 4 7 ] 0 ]"
    assert listops.evaluate(brackets.decode(brackets.encode(text, 16))) == listops.evaluate(text) == 4
    assert (official.vocab_size, brackets.vocab_size) == (15, 16)
    ids = official.encode(text, 8)
    assert ids.shape == (8,) and ids.dtype == np.int64 and list(ids[6:]) == [0, 0]
    with pytest.raises(DataError, match="unknown ListOps tokenization 'bytes'"):
        ListOpsTokenizer("bytes")


def test_listops_tokenizer_errors_and_truncation():
    tokenizer = ListOpsTokenizer("brackets")
    with pytest.raises(DataError, match="unknown ListOps token 'x' at position 1"):
        tokenizer.encode("[MAX x 2 ]", 10)
    with pytest.raises(DataError, match="more than max_length=3"):
        tokenizer.encode("[MAX 1 2 ]", 3)
    assert tokenizer.decode(tokenizer.encode("[MAX 1 2 ]", 3, truncate=True)) == "[MAX 1 2"


def test_byte_tokenizer_round_trip_padding_truncation():
    tokenizer = ByteTokenizer()
    ids = tokenizer.encode("héllo", 10)
    assert ids.tolist() == [b + 1 for b in "héllo".encode()] + [0] * 4
    assert tokenizer.decode(ids) == "héllo"
    assert tokenizer.encode_batch(["abc", "abcdef"], 4).tolist() == [[98, 99, 100, 0], [98, 99, 100, 101]]


def test_pathfinder_images_labels_and_markers():
    images, labels = pathfinder.generate(400, seed=0)
    assert images.shape == (400, 32, 32) and images.dtype == np.uint8
    assert labels.sum() == 200 and set(np.unique(images)) == {0, 255}
    again, again_labels = pathfinder.generate(400, seed=0, workers=2)  # the same whatever the processes
    assert np.array_equal(images, again) and np.array_equal(labels, again_labels)
    scenes = pathfinder.generate_scenes(200, seed=1)
    ends = scenes.snake_ends()
    np.testing.assert_allclose(scenes.markers[:, 0], ends[:, 0, 0])
    same = scenes.labels == 1
    np.testing.assert_allclose(scenes.markers[same, 1], ends[same, 0, 1])
    np.testing.assert_allclose(scenes.markers[~same, 1], ends[~same, 1, 1])
    assert ((np.rint(ends) >= 0) & (np.rint(ends) <= 31)).all()  # the markers' pixels are on the canvas
    rendered = pathfinder.render(scenes)
    centres = np.rint(scenes.markers).astype(int)
    for index in range(2):
        assert (rendered[np.arange(200), centres[:, index, 1], centres[:, index, 0]] == 255).all()


def test_pathfinder_defaults_are_the_lra_generators_parameters():
    """LRA's Pathfinder32 (lra_benchmarks/data/pathfinder.py, snakes2 arguments): window 32, padding 1,
    paddle length 2, margin 1 on either side of each pivot (a gap of 2), marker radius 1.5, contour length
    14, seed distance 7, continuity 1.0, distractors of contour_length // 3 paddles, 20 // that many."""
    parameters = inspect.signature(pathfinder.generate_scenes).parameters
    declared = {name: parameters[name].default for name in (
        "size", "padding", "paddle_length", "paddle_gap", "marker_radius", "contour_length", "seed_distance",
        "continuity")}  # fmt: skip
    assert declared == {"size": 32, "padding": 1, "paddle_length": 2, "paddle_gap": 2, "marker_radius": 1.5,
                        "contour_length": 14, "seed_distance": 7, "continuity": 1.0}  # fmt: skip
    scenes = pathfinder.generate_scenes(300, seed=3)
    assert scenes.snakes.shape == (300, 2, 14, 2) and scenes.distractors.shape == (300, 5, 4, 2)
    assert pathfinder.generate_scenes(2, seed=0, contour_length=6).distractors.shape[1:3] == (10, 2)  # easy
    assert scenes.distractor_kept.mean() > 0.5
    # Paddles: 2 long, the next starting 1 beyond a pivot that lies 1 beyond the end of the previous one.
    units = np.stack([np.cos(scenes.snake_headings), np.sin(scenes.snake_headings)], axis=-1)
    np.testing.assert_allclose(scenes.snakes[:, :, 1:], scenes.snakes[:, :, :-1] + 3 * units[:, :, :-1]
                               + units[:, :, 1:])  # fmt: skip
    turns = np.angle(np.exp(1j * np.diff(scenes.snake_headings, axis=-1)))
    assert np.abs(turns).max() <= np.pi / 2
    # Seeds: origins 7 apart, one of them at least 14 from every edge; either snake may be the central one.
    origins = scenes.snake_ends()[:, :, 0]
    np.testing.assert_allclose(np.linalg.norm(origins[:, 0] - origins[:, 1], axis=-1), 7.0)
    central = ((origins >= 14) & (origins <= 17)).all(axis=-1)
    assert central.any(axis=1).all() and 0.3 < central[:, 0].mean() < 0.7


def test_pathfinder_turns_follow_the_continuity_weights():
    """Away from the edges and other snakes, turns have density cos(turn)^2 on +-90 degrees (continuity 1),
    whose mean absolute value is (pi^2 / 16 - 1 / 4) / (pi / 4) = 0.467 radians."""
    scenes = pathfinder.generate_scenes(300, seed=4, size=400, n_distractors=0)
    turns = np.abs(np.angle(np.exp(1j * np.diff(scenes.snake_headings, axis=-1))))
    assert abs(turns.mean() - (np.pi**2 / 16 - 0.25) / (np.pi / 4)) < 0.02


def _snake_pixels(starts: np.ndarray, headings: np.ndarray) -> set[tuple[int, int]]:
    """Independent rasterization of paddles of length 2: points a third of a pixel apart, rounded."""
    along = np.linspace(0.0, 2.0, 7)[:, None]
    units = np.stack([np.cos(headings), np.sin(headings)], axis=-1)
    points = np.rint(starts[:, None] + along * units[:, None]).astype(int).reshape(-1, 2)
    return set(map(tuple, points))


def _apart(first: set, second: set) -> int:
    """Least distance in x and y (Chebyshev) between two pixel sets."""
    a, b = np.array(sorted(first)), np.array(sorted(second))
    return int(np.abs(a[:, None] - b[None]).max(-1).min())


def test_pathfinder_snakes_never_touch():
    """Every snake's pixels (targets and the distractors kept) keep one empty pixel from every other snake's,
    and a snake's paddles keep it from its own paddles but the neighbouring ones, so no snake crosses
    another and following a snake never leads onto another."""
    scenes = pathfinder.generate_scenes(150, seed=5, marker_radius=0.5)
    images = pathfinder.render(scenes)
    for index in range(150):
        snakes = [_snake_pixels(scenes.snakes[index, s], scenes.snake_headings[index, s]) for s in (0, 1)]
        snakes += [_snake_pixels(scenes.distractors[index, d], scenes.distractor_headings[index, d])
                   for d in np.flatnonzero(scenes.distractor_kept[index])]  # fmt: skip
        assert set(map(tuple, np.argwhere(images[index])[:, ::-1])) == set().union(*snakes)
        assert min(_apart(a, b) for i, a in enumerate(snakes) for b in snakes[i + 1 :]) >= 2
        for s in (0, 1):
            starts, headings = scenes.snakes[index, s], scenes.snake_headings[index, s]
            paddles = [_snake_pixels(starts[k : k + 1], headings[k : k + 1]) for k in range(14)]
            assert min(_apart(paddles[k], paddles[j]) for k in range(14) for j in range(k + 2, 14)) >= 2


def test_pathfinder_label_means_connected_markers():
    """Gap-free snakes without distractors, single-pixel markers: label-1 markers always share a connected
    component, label-0 markers never (the snakes never touch)."""
    scenes = pathfinder.generate_scenes(400, seed=2, paddle_gap=0.0, n_distractors=0, contour_length=8,
                                        marker_radius=0.5)  # fmt: skip
    images = pathfinder.render(scenes)
    centres = np.rint(scenes.markers).astype(int)
    connected = []
    for image, centre in zip(images, centres, strict=True):
        components, _ = ndimage.label(image > 0, structure=np.ones((3, 3)))
        connected.append(components[centre[0, 1], centre[0, 0]] == components[centre[1, 1], centre[1, 0]])
    connected = np.array(connected)
    assert connected[scenes.labels == 1].all()
    assert not connected[scenes.labels == 0].any()


def test_read_listops_tsv(tmp_path):
    path = tmp_path / "basic_train.tsv"
    path.write_text("Source\tTarget\n( [MAX 2 9 ] )\t9\n[SM 1 2 ]\t3\n")
    limit = csv.field_size_limit()
    assert readers.read_listops_tsv(path) == [
        {"text": "( [MAX 2 9 ] )", "label": 9},
        {"text": "[SM 1 2 ]", "label": 3},
    ]
    assert csv.field_size_limit() == limit  # the process's limit: the service's CSV check reads with it
    path.write_text("Source\tTarget\n[SM 1 2 ]\tthree\n")
    with pytest.raises(DataError, match=r"basic_train.tsv: row 2: label 'three' is not an integer in 0..9"):
        readers.read_listops_tsv(path)
    path.write_text("text\tlabel\n")
    with pytest.raises(DataError, match="header"):
        readers.read_listops_tsv(path)
    with pytest.raises(DataError, match="LRA TSV file not found"):
        readers.read_listops_tsv(tmp_path / "missing.tsv")


def test_read_retrieval_tsv(tmp_path):
    path = tmp_path / "new_aan_pairs.train.tsv"
    path.write_text("1.0\tid1\tid2\tfirst doc\tsecond doc\n0\ta\tb\tx\ty\n")
    assert readers.read_retrieval_tsv(path) == [
        {"text_a": "first doc", "text_b": "second doc", "label": 1},
        {"text_a": "x", "text_b": "y", "label": 0},
    ]
    path.write_text("1\tid1\tid2\tonly one doc\n")
    with pytest.raises(DataError, match="row 1: expected 5 tab-separated fields"):
        readers.read_retrieval_tsv(path)


def test_read_cifar10_binary_batches(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, size=6, dtype=np.uint8)
    pixels = rng.integers(0, 256, size=(6, 3, 32, 32), dtype=np.uint8)
    records = np.concatenate([labels[:, None], pixels.reshape(6, -1)], axis=1)
    for i in range(1, 6):
        records[(i - 1) : i + 1].tofile(tmp_path / f"data_batch_{i}.bin")
    records.tofile(tmp_path / "test_batch.bin")
    images, read_labels = readers.read_cifar10(tmp_path, "test")
    expected = np.rint(0.2989 * pixels[:, 0] + 0.5870 * pixels[:, 1] + 0.1140 * pixels[:, 2])
    assert np.array_equal(read_labels, labels) and np.array_equal(images, expected.astype(np.uint8))
    assert readers.read_cifar10(tmp_path, "train")[0].shape == (10, 32, 32)
    (tmp_path / "test_batch.bin").write_bytes(records.tobytes()[:-5])
    with pytest.raises(DataError, match="not a whole number of 3073-byte CIFAR-10 records"):
        readers.read_cifar10(tmp_path, "test")


def test_read_pathfinder_release_layout(tmp_path):
    images, labels = pathfinder.generate(4, seed=0)
    (tmp_path / "imgs" / "0").mkdir(parents=True)
    (tmp_path / "metadata").mkdir()
    lines = []
    for index, (image, label) in enumerate(zip(images, labels, strict=True)):
        Image.fromarray(image).save(tmp_path / "imgs" / "0" / f"sample_{index}.png")
        lines.append(f"imgs/0 sample_{index}.png {index} {label} 14 1.5 1.0 6 0")
    (tmp_path / "metadata" / "0.npy").write_text("\n".join(lines) + "\n")
    read_images, read_labels = readers.read_pathfinder(tmp_path)
    assert np.array_equal(read_images, images) and np.array_equal(read_labels, labels)
    (tmp_path / "metadata" / "1.npy").write_text("imgs/0 missing.png 0 1\n")
    with pytest.raises(DataError, match=r"Pathfinder image of .*1.npy:1 not found"):
        readers.read_pathfinder(tmp_path)


def test_read_imdb_folders(tmp_path):
    for polarity, text in (("pos", "great"), ("neg", "awful")):
        (tmp_path / "train" / polarity).mkdir(parents=True)
        (tmp_path / "train" / polarity / "0_9.txt").write_text(text)
    assert readers.read_imdb(tmp_path, "train") == [
        {"text": "awful", "label": 0},
        {"text": "great", "label": 1},
    ]
    with pytest.raises(DataError, match="aclImdb/test/neg"):
        readers.read_imdb(tmp_path, "test")


def test_tasks_generate_cache_and_explain_missing_files(tmp_path):
    first = load_task("listops", seq_len=64, n_train=20, n_eval=10, seed=0, cache_dir=tmp_path,
                      tokenization="brackets")  # fmt: skip
    assert first.splits["train"]["inputs"].shape == (20, 64) and first.vocab_size == 16
    assert len(list(tmp_path.glob("listops-*.npz"))) == 1
    cached = load_task("listops", seq_len=64, n_train=20, n_eval=10, seed=0, cache_dir=tmp_path,
                       tokenization="brackets")  # fmt: skip
    for split in ("train", "val", "test"):
        for key, array in first.splits[split].items():
            assert np.array_equal(cached.splits[split][key], array)
    official = load_task("listops", seq_len=64, n_train=20, n_eval=10, seed=0, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("listops-*.npz"))) == 2 and official.vocab_size == 15  # a cache each
    assert np.array_equal(official.splits["val"]["labels"], first.splits["val"]["labels"])  # the same trees
    tokenizer = ListOpsTokenizer("brackets")
    for row, label in zip(first.splits["val"]["inputs"], first.splits["val"]["labels"], strict=True):
        assert listops.evaluate(tokenizer.decode(row)) == label
    pixels = load_task("pathfinder", n_train=8, n_eval=4, cache_dir=tmp_path)
    assert pixels.splits["test"]["inputs"].shape == (4, 1024) and pixels.vocab_size is None
    with pytest.raises(DataError, match="aclImdb_v1.tar.gz"):
        load_task("text")
    with pytest.raises(DataError, match="cifar-10-binary"):
        load_task("image", data_dir=tmp_path)
    with pytest.raises(DataError, match="1024 pixels"):
        load_task("pathfinder", seq_len=512)
    with pytest.raises(DataError, match="unknown LRA task 'audio'"):
        load_task("audio")
