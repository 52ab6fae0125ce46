"""Pathfinder (Linsley et al., 2018; the LRA 32x32 version): are the two marker discs on the same curve?

Each grey-scale image holds two "snakes" (chains of short paddles separated by gaps, bending by a random
angle at every paddle), a few short distractor snakes, and two marker discs. Label 1: the discs sit on
both ends of one snake; label 0: on one end of each snake. `contour_length` is the number of paddles per
snake (LRA: 6 easy, 9 intermediate, 14 hard). All images of a call are drawn together with numpy (random
walks vectorized over images), so thousands take a fraction of a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _walks(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    n_paddles: int,
    size: int,
    step: float,
    max_turn: float,
    margin: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Start points (..., n_paddles, 2) and headings (..., n_paddles) of walks that stay on the canvas."""
    low, high = margin, size - 1 - margin
    position = rng.uniform(low, high, size=(*shape, 2))
    heading = rng.uniform(-np.pi, np.pi, size=shape)
    points = np.empty((*shape, n_paddles, 2))
    headings = np.empty((*shape, n_paddles))
    for paddle in range(n_paddles):
        if paddle:
            heading = heading + rng.uniform(-max_turn, max_turn, size=shape)
        ahead = position + step * np.stack([np.cos(heading), np.sin(heading)], axis=-1)
        # Bounce off the walls: mirror the heading along the axis that would leave the canvas.
        leaves_x = (ahead[..., 0] < low) | (ahead[..., 0] > high)
        leaves_y = (ahead[..., 1] < low) | (ahead[..., 1] > high)
        heading = np.where(leaves_x, np.pi - heading, heading)
        heading = np.where(leaves_y, -heading, heading)
        points[..., paddle, :] = position
        headings[..., paddle] = heading
        position = np.clip(position + step * np.stack([np.cos(heading), np.sin(heading)], axis=-1), low, high)
    return points, headings


def _paddle_pixels(points: np.ndarray, headings: np.ndarray, paddle_length: float) -> np.ndarray:
    """Pixel coordinates (..., samples, 2) covering each paddle segment."""
    along = np.linspace(0.0, paddle_length, int(np.ceil(paddle_length)) * 3 + 1)
    direction = np.stack([np.cos(headings), np.sin(headings)], axis=-1)
    pixels = points[..., None, :] + along[:, None] * direction[..., None, :]
    return pixels.reshape(*points.shape[:-3], -1, 2)


def _draw(images: np.ndarray, pixels: np.ndarray, value: int) -> None:
    """Set `pixels` (N, K, 2) of each image (N, size, size) to `value`, dropping those off the canvas."""
    size = images.shape[-1]
    xy = np.rint(pixels).astype(np.int64)
    image_index = np.broadcast_to(np.arange(len(images))[:, None], xy.shape[:2])
    inside = (xy >= 0).all(-1) & (xy < size).all(-1)
    images[image_index[inside], xy[..., 1][inside], xy[..., 0][inside]] = value


@dataclass
class Scenes:
    """Geometry of Pathfinder images before rendering, in pixel coordinates (x, y)."""

    snakes: np.ndarray  # (n, 2, contour_length, 2) start point of every paddle of both snakes
    snake_headings: np.ndarray  # (n, 2, contour_length) direction of every paddle
    distractors: np.ndarray  # (n, n_distractors, distractor_length, 2)
    distractor_headings: np.ndarray  # (n, n_distractors, distractor_length)
    markers: np.ndarray  # (n, 2, 2) centres of the two discs
    labels: np.ndarray  # (n,) 1 = both discs on snake 0, 0 = one disc on each snake
    size: int
    paddle_length: float
    marker_radius: float

    def snake_ends(self) -> np.ndarray:
        """(n, 2 snakes, 2 ends, 2): the first paddle's start and the last paddle's tip of each snake."""
        last = self.snake_headings[..., -1]
        tips = self.snakes[:, :, -1] + self.paddle_length * np.stack([np.cos(last), np.sin(last)], axis=-1)
        return np.stack([self.snakes[:, :, 0], tips], axis=2)


def generate_scenes(
    n: int,
    seed: int,
    *,
    size: int = 32,
    contour_length: int = 14,
    n_distractors: int = 6,
    distractor_length: int = 3,
    paddle_length: float = 2.0,
    paddle_gap: float = 1.5,
    max_turn_degrees: float = 30.0,
    marker_radius: float = 1.5,
) -> Scenes:
    """Random snakes, distractors and markers of `n` images with balanced labels, reproducible from `seed`."""
    if n < 0 or contour_length < 2:
        raise ValueError(f"need n >= 0 and contour_length >= 2, got n={n}, contour_length={contour_length}")
    rng = np.random.default_rng(seed)
    step = paddle_length + paddle_gap
    max_turn = np.deg2rad(max_turn_degrees)
    margin = marker_radius + 1
    snakes, snake_headings = _walks(rng, (n, 2), contour_length, size, step, max_turn, margin)
    distractors, distractor_headings = _walks(
        rng, (n, n_distractors), distractor_length, size, step, max_turn, margin
    )
    labels = rng.permutation(np.arange(n) < n // 2).astype(np.int64)
    scenes = Scenes(
        snakes,
        snake_headings,
        distractors,
        distractor_headings,
        np.empty((n, 2, 2)),
        labels,
        size,
        paddle_length,
        marker_radius,
    )
    ends = scenes.snake_ends()
    second = np.where(labels[:, None] == 1, ends[:, 0, 1], ends[:, 1, 1])
    scenes.markers = np.stack([ends[:, 0, 0], second], axis=1)
    return scenes


def render(scenes: Scenes) -> np.ndarray:
    """Images (n, size, size) uint8: paddles and discs at 255 on a black background."""
    n, size = len(scenes.labels), scenes.size
    images = np.zeros((n, size, size), dtype=np.uint8)
    _draw(images, _paddle_pixels(scenes.snakes, scenes.snake_headings, scenes.paddle_length), 255)
    if scenes.distractors.shape[1]:
        _draw(
            images, _paddle_pixels(scenes.distractors, scenes.distractor_headings, scenes.paddle_length), 255
        )
    radius = int(np.ceil(scenes.marker_radius))
    grid = np.arange(-radius, radius + 1)
    offsets = np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2)
    disc = offsets[(offsets**2).sum(-1) <= scenes.marker_radius**2]
    centres = np.rint(scenes.markers).reshape(n, 2, 1, 2)
    _draw(images, (centres + disc).reshape(n, -1, 2), 255)
    return images


def generate(n: int, seed: int, **options) -> tuple[np.ndarray, np.ndarray]:
    """`n` images (n, size, size) uint8 and balanced labels (n,) int64; options as in `generate_scenes`."""
    scenes = generate_scenes(n, seed, **options)
    return render(scenes), scenes.labels
