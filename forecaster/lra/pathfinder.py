"""Pathfinder (Linsley et al., 2018; the LRA 32x32 version): are the two marker discs on the same curve?

Each grey-scale image holds two "snakes" (chains of short paddles separated by gaps, turning at every
paddle), short distractor snakes, and two marker discs. Label 1: the discs sit on both ends of one snake;
label 0: on one end of each snake. The images of a call are grown together with numpy, paddle by paddle
(vectorized over images): about a millisecond per image on one core, in chunks over `workers` processes.

The defaults are LRA's Pathfinder-32 (`lra_benchmarks/data/pathfinder.py`, the Pathfinder32 docstring: the
generator github.com/drewlinsley/pathfinder, `snakes2.py`, run with window_size 32, padding 1,
paddle_length 2, paddle_margin 1, marker_radius 1.5, contour_length 14, seed_distance 7, continuity 1.0,
distractor_length = contour_length // 3, num_distractor_snakes = 20 // distractor_length); LRA's
difficulties are contour lengths 6 (easy, curv_baseline), 9 and 14 (hard). What snakes2 does with them,
followed here:

- a paddle is `paddle_length` long; consecutive paddles turn at a pivot `paddle_margin` beyond the end of
  one and before the start of the next, so the gap is 2 x margin = 2 pixels (`paddle_gap`);
- each paddle's direction is drawn with weight cos(min(continuity x |turn|, 90 degrees))^2 among the
  directions that keep it on the canvas and clear of the other snakes (`continuity` 1.0: turns up to 90
  degrees, mostly small); where none is left, both target snakes are drawn again;
- snakes never touch: snakes2 keeps an occupancy mask dilated by the margin; here no pixel of a paddle may
  lie within `clearance` pixels (in x and y) of another snake's pixels or of its own earlier paddles but
  the previous one; distractors that find no room after `distractor_retries` tries are left out, as in
  snakes2;
- the first target snake starts at least 2 x seed_distance from every edge, the second seed_distance from
  it; one marker goes on the origin of either snake at random, the other on the far end of the same snake
  (label 1) or of the other one (label 0).

Differences: paddles and discs are drawn 1 pixel wide at 255 on black (snakes2 draws 0.5-pixel paddles
anti-aliased at 2x, paddles at contrast 2 x 0.75 and discs at 1, rescaled to 0..255); a distractor may
cross itself; labels are balanced exactly (snakes2 draws each at random); no single-paddle distractors
(LRA's list leaves snakes2's `use_single_paddles` unset, its wrapper script turns them off).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

_CANDIDATES = 11  # directions tried per paddle (snakes2 tries the ~9 pixels of its circle within 90 degrees)
_CHUNK = 4096  # images grown at once (with two occupancy grids of 34 x 34 bytes each, some 10 MB)
_MAX_ROUNDS = 1000  # redraws of target snakes that found no room, before giving up on the settings


@dataclass(frozen=True)
class _Shape:
    """The settings every walker of a call shares."""

    size: int
    paddle_length: float
    paddle_gap: float
    continuity: float
    padding: float
    clearance: int

    @property
    def step(self) -> float:
        """From a paddle's start to the next pivot: the paddle and half a gap."""
        return self.paddle_length + self.paddle_gap / 2

    @property
    def side(self) -> int:
        """Side of the occupancy grids: the canvas padded by `clearance` on every side."""
        return self.size + 2 * self.clearance


def _candidates(
    rng: np.random.Generator, m: int, headings: np.ndarray | None, continuity: float
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate directions (m, C) and their weights. Turns spread evenly (one random offset per walker)
    within +-90 / continuity degrees, weighted cos(continuity x turn)^2 as snakes2 weighs its candidates;
    without `headings` (a first paddle), directions spread around the circle, weighted alike."""
    spread = np.arange(_CANDIDATES) + rng.uniform(size=(m, 1))
    if headings is None:
        directions = spread * (2 * np.pi / _CANDIDATES)
        return directions, np.ones_like(directions)
    limit = min(np.pi, np.pi / (2 * continuity))
    turns = spread * (2 * limit / _CANDIDATES) - limit
    return headings[:, None] + turns, np.cos(np.minimum(continuity * np.abs(turns), np.pi / 2)) ** 2


def _direction(headings: np.ndarray) -> np.ndarray:
    """Unit vectors (..., 2) of angles (...)."""
    return np.stack([np.cos(headings), np.sin(headings)], axis=-1)


def _samples(paddle_length: float) -> int:
    """Points drawn per paddle: a third of a pixel apart, so its pixels leave no gap."""
    return int(np.ceil(paddle_length)) * 3 + 1


def _paddle_pixels(points: np.ndarray, units: np.ndarray, paddle_length: float) -> np.ndarray:
    """Pixels (..., samples, 2) int drawn for paddles from points (..., 2) along unit vectors (..., 2)."""
    along = np.linspace(0.0, paddle_length, _samples(paddle_length))[:, None]
    return np.rint(points[..., None, :] + along * units[..., None, :]).astype(np.int64)


def _flat(pixels: np.ndarray) -> np.ndarray:
    """(n, ..., 2) -> (n, points, 2), also for n = 0."""
    return pixels.reshape(len(pixels), int(np.prod(pixels.shape[1:-1])), 2)


def _cells(shape: _Shape, images: np.ndarray, pixels: np.ndarray) -> np.ndarray:
    """Flat indices into occupancy grids (images, side, side) of pixels (..., 2); the grids are padded by
    `clearance` on every side, so that marking the cells around a pixel of the canvas needs no clipping."""
    side = shape.side
    return (images * side + pixels[..., 1] + shape.clearance) * side + pixels[..., 0] + shape.clearance


def _stamp(shape: _Shape, taken: np.ndarray, cells: np.ndarray) -> None:
    """Mark the cells within `clearance` (in x and y) of the flat `cells` as taken in grids `taken`."""
    side, steps = shape.side, np.arange(-shape.clearance, shape.clearance + 1)
    taken.reshape(-1)[(cells[..., None] + (steps[:, None] * side + steps).ravel()).ravel()] = True


def _next_paddles(
    rng: np.random.Generator,
    shape: _Shape,
    taken: np.ndarray,
    images: np.ndarray,
    pivots: np.ndarray,
    headings: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The next paddle of m walkers of `images`: (starts (m, 2), headings (m,), cells (m, K), found (m,)).

    headings None: a first paddle, starting at `pivots`; otherwise the paddle turns at the pivot and starts
    half a gap beyond it. A candidate needs its pixels on the canvas and off the `taken` cells; one is drawn
    among those by weight, and walkers without any are not `found`."""
    m = len(images)
    directions, weights = _candidates(rng, m, headings, shape.continuity)
    units, starts = _direction(directions), pivots[:, None]
    if headings is not None:
        starts = starts + shape.paddle_gap / 2 * units
    starts = np.broadcast_to(starts, (m, _CANDIDATES, 2))
    pixels = _paddle_pixels(starts, units, shape.paddle_length)  # (m, candidates, K, 2)
    cells = _cells(shape, images[:, None, None], pixels)
    room = ((pixels >= 0) & (pixels < shape.size)).all(axis=(-1, -2))
    room &= ~np.take(taken, cells, mode="clip").any(-1)  # off-canvas cells: refused just above
    weights = np.where(room, weights, 0.0)
    total = weights.sum(axis=1)
    pick = (weights.cumsum(axis=1) < rng.uniform(size=(m, 1)) * total[:, None]).sum(axis=1)
    pick, rows = np.minimum(pick, _CANDIDATES - 1), np.arange(m)
    return starts[rows, pick], directions[rows, pick], cells[rows, pick], total > 0


def _grow_targets(
    rng: np.random.Generator, shape: _Shape, n: int, n_paddles: int, seed_distance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two snakes per image grown paddle by paddle in turn, the first from within 2 x seed_distance of the
    centre, the second from seed_distance away; images where one finds no room are grown again.
    Returns paddle starts (n, 2, L, 2), headings (n, 2, L) and the occupancy grids (n, side, side)."""
    size, side = shape.size, shape.side
    points, headings = np.empty((n, 2, n_paddles, 2)), np.empty((n, 2, n_paddles))
    taken = np.zeros((n, side, side), dtype=bool)
    todo = np.arange(n)
    low, high = sorted((2 * seed_distance, size - 1 - 2 * seed_distance))
    for _ in range(_MAX_ROUNDS):
        m = len(todo)
        # What each snake must keep clear of: everything drawn but its own last paddle.
        grids = np.zeros((2, m, side, side), dtype=bool)
        first = rng.uniform(low, high, size=(m, 2))
        second = first + seed_distance * _direction(rng.uniform(-np.pi, np.pi, size=m))
        pivots = np.clip(np.stack([first, second], axis=1), shape.padding, size - 1 - shape.padding)
        heads, last = np.zeros((m, 2)), np.zeros((m, 2, _samples(shape.paddle_length)), dtype=np.int64)
        alive = np.ones(m, dtype=bool)
        for paddle in range(n_paddles):
            for snake in (0, 1):
                rows = np.flatnonzero(alive)
                turning = heads[rows, snake] if paddle else None
                start, heading, cells, found = _next_paddles(
                    rng, shape, grids[snake], rows, pivots[rows, snake], turning
                )
                alive[rows[~found]] = False
                rows, start, heading, cells = rows[found], start[found], heading[found], cells[found]
                _stamp(shape, grids[1 - snake], cells)
                if paddle:  # its previous paddle is settled now that the next one is clear of it
                    _stamp(shape, grids[snake], last[rows, snake])
                points[todo[rows], snake, paddle], headings[todo[rows], snake, paddle] = start, heading
                last[rows, snake], heads[rows, snake] = cells, heading
                pivots[rows, snake] = start + shape.step * _direction(heading)
        rows = np.flatnonzero(alive)
        taken[todo[rows]] = grids[0, rows] | grids[1, rows]
        todo = todo[~alive]
        if not len(todo):
            return points, headings, taken
    raise ValueError(f"two snakes of {n_paddles} paddles find no room on a {size}-pixel canvas")


def _grow_distractors(
    rng: np.random.Generator, shape: _Shape, taken: np.ndarray, count: int, n_paddles: int, retries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`count` distractor snakes per image, each seeded anywhere and grown clear of everything drawn before
    it; one that finds no room in `retries` + 1 tries is left out. Returns starts, headings, kept."""
    n = len(taken)
    points, headings = np.zeros((n, count, n_paddles, 2)), np.zeros((n, count, n_paddles))
    kept = np.zeros((n, count), dtype=bool)
    for slot in range(count):
        for _ in range(retries + 1):
            images = np.flatnonzero(~kept[:, slot])
            pivots = rng.uniform(shape.padding, shape.size - 1 - shape.padding, size=(len(images), 2))
            heads = np.zeros(len(images))
            cells = np.zeros((len(images), n_paddles, _samples(shape.paddle_length)), np.int64)
            alive = np.ones(len(images), dtype=bool)
            for paddle in range(n_paddles):
                rows = np.flatnonzero(alive)
                start, heading, drawn, found = _next_paddles(
                    rng, shape, taken, images[rows], pivots[rows], heads[rows] if paddle else None
                )
                alive[rows[~found]] = False
                rows, start, heading = rows[found], start[found], heading[found]
                points[images[rows], slot, paddle], headings[images[rows], slot, paddle] = start, heading
                cells[rows, paddle], heads[rows] = drawn[found], heading
                pivots[rows] = start + shape.step * _direction(heading)
            rows = np.flatnonzero(alive)
            _stamp(shape, taken, cells[rows])
            kept[images[rows], slot] = True
    return points, headings, kept


@dataclass
class Scenes:
    """Geometry of Pathfinder images before rendering, in pixel coordinates (x, y)."""

    snakes: np.ndarray  # (n, 2, contour_length, 2) start point of every paddle of both snakes
    snake_headings: np.ndarray  # (n, 2, contour_length) direction of every paddle
    distractors: np.ndarray  # (n, n_distractors, distractor_length, 2)
    distractor_headings: np.ndarray  # (n, n_distractors, distractor_length)
    distractor_kept: np.ndarray  # (n, n_distractors) bool: False where no room was found (not drawn)
    markers: np.ndarray  # (n, 2, 2) centres of the two discs
    labels: np.ndarray  # (n,) 1 = both discs on snake 0, 0 = one disc on each snake
    size: int
    paddle_length: float
    marker_radius: float

    def snake_ends(self) -> np.ndarray:
        """(n, 2 snakes, 2 ends, 2): the first paddle's start and the last paddle's tip of each snake."""
        tips = self.snakes[:, :, -1] + self.paddle_length * _direction(self.snake_headings[..., -1])
        return np.stack([self.snakes[:, :, 0], tips], axis=2)


def _chunk(task: tuple) -> tuple[np.ndarray, ...]:
    """Target snakes, distractors and which distractors were kept, of one chunk of images, each chunk
    from its own random stream."""
    seed, index, count, shape, contour_length, seed_distance, n_distractors, distractor_length, retries = task
    rng = np.random.default_rng([seed, index])
    snakes, headings, taken = _grow_targets(rng, shape, count, contour_length, seed_distance)
    return snakes, headings, *_grow_distractors(rng, shape, taken, n_distractors, distractor_length, retries)


def generate_scenes(
    n: int,
    seed: int,
    *,
    size: int = 32,
    contour_length: int = 14,
    distractor_length: int | None = None,
    n_distractors: int | None = None,
    paddle_length: float = 2.0,
    paddle_gap: float = 2.0,
    continuity: float = 1.0,
    seed_distance: float = 7.0,
    padding: float = 1.0,
    marker_radius: float = 1.5,
    clearance: int = 1,
    distractor_retries: int = 4,
    workers: int = 1,
) -> Scenes:
    """Random snakes, distractors and markers of `n` images with balanced labels, reproducible from `seed`
    whatever `workers` (processes) grow them.

    Defaults: LRA's Pathfinder-32 (module docstring); `distractor_length` defaults to contour_length // 3
    and `n_distractors` to 20 // distractor_length, as LRA derives them."""
    if n < 0 or contour_length < 2 or continuity <= 0 or clearance < 0:
        raise ValueError(f"need n >= 0, contour_length >= 2, continuity > 0 and clearance >= 0, got n={n}, "
                         f"contour_length={contour_length}, continuity={continuity}, clearance={clearance}")
    distractor_length = max(1, contour_length // 3) if distractor_length is None else distractor_length
    n_distractors = 20 // distractor_length if n_distractors is None else n_distractors
    shape = _Shape(size, paddle_length, paddle_gap, continuity, padding, clearance)
    tasks = [(seed, index, min(_CHUNK, n - start), shape, contour_length, seed_distance, n_distractors,
              distractor_length, distractor_retries)
             for index, start in enumerate(range(0, max(n, 1), _CHUNK))]  # fmt: skip
    if workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(min(workers, len(tasks))) as pool:
            parts = list(pool.map(_chunk, tasks))
    else:
        parts = [_chunk(task) for task in tasks]
    snakes, snake_headings, distractors, distractor_headings, kept = (
        np.concatenate(arrays) for arrays in zip(*parts, strict=True)
    )
    rng = np.random.default_rng(seed)
    swap = rng.uniform(size=n) < 0.5  # which snake carries the origin marker
    snakes[swap], snake_headings[swap] = snakes[swap][:, ::-1], snake_headings[swap][:, ::-1]
    labels = rng.permutation(np.arange(n) < n // 2).astype(np.int64)
    scenes = Scenes(snakes, snake_headings, distractors, distractor_headings, kept, np.empty((n, 2, 2)),
                    labels, size, paddle_length, marker_radius)  # fmt: skip
    ends = scenes.snake_ends()
    second = np.where(labels[:, None] == 1, ends[:, 0, 1], ends[:, 1, 1])
    scenes.markers = np.stack([ends[:, 0, 0], second], axis=1)
    return scenes


def _draw(images: np.ndarray, pixels: np.ndarray, value: int) -> None:
    """Set integer `pixels` (N, K, 2) of images (N, size, size) to `value`, dropping those off the canvas."""
    size = images.shape[-1]
    image_index = np.broadcast_to(np.arange(len(images))[:, None], pixels.shape[:2])
    inside = (pixels >= 0).all(-1) & (pixels < size).all(-1)
    images[image_index[inside], pixels[..., 1][inside], pixels[..., 0][inside]] = value


def render(scenes: Scenes) -> np.ndarray:
    """Images (n, size, size) uint8: paddles and discs at 255 on a black background (drawn in chunks, so
    the pixel lists of 200,000 images never sit in memory at once)."""
    n, length = len(scenes.labels), scenes.paddle_length
    images = np.zeros((n, scenes.size, scenes.size), dtype=np.uint8)
    radius = int(np.ceil(scenes.marker_radius))
    grid = np.arange(-radius, radius + 1)
    offsets = np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2)
    disc = offsets[(offsets**2).sum(-1) <= scenes.marker_radius**2]
    for start in range(0, n, _CHUNK):
        part = slice(start, start + _CHUNK)
        drawn = images[part]
        snakes = _paddle_pixels(scenes.snakes[part], _direction(scenes.snake_headings[part]), length)
        _draw(drawn, _flat(snakes), 255)
        units = _direction(scenes.distractor_headings[part])
        pixels = _paddle_pixels(scenes.distractors[part], units, length)
        kept = scenes.distractor_kept[part, :, None, None, None]
        _draw(drawn, _flat(np.where(kept, pixels, -1)), 255)  # left out: off the canvas
        centres = np.rint(scenes.markers[part]).astype(np.int64)[:, :, None]
        _draw(drawn, _flat(centres + disc), 255)
    return images


def generate(n: int, seed: int, **options) -> tuple[np.ndarray, np.ndarray]:
    """`n` images (n, size, size) uint8 and balanced labels (n,) int64; options as in `generate_scenes`."""
    scenes = generate_scenes(n, seed, **options)
    return render(scenes), scenes.labels
