"""Random inputs for hidden tests: shapes, dtypes and memory layouts the visible tests lack.

Every generator is seeded, so a hidden test sees the same cases on every run and a
failure can be reproduced from its label.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

DTYPES = (torch.float32, torch.float64, torch.int64)
LAYOUTS = ("contiguous", "transposed", "every other column", "slice with an offset")


@dataclass(frozen=True)
class Operands:
    """Two same-shaped tensors and a scalar, with a label naming their dtype and layout."""

    x: torch.Tensor
    y: torch.Tensor
    alpha: float | int
    label: str


def operand_cases(seed: int, count: int) -> list[Operands]:
    """``count`` cases cycling through every dtype and layout, with random shapes."""
    generator = torch.Generator().manual_seed(seed)
    cases = []
    for index in range(count):
        dtype = DTYPES[index % len(DTYPES)]
        layout = LAYOUTS[index % len(LAYOUTS)]
        ndim = int(torch.randint(1, 4, (), generator=generator))
        shape = tuple(int(n) for n in torch.randint(1, 7, (ndim,), generator=generator))
        x = laid_out(shape, dtype, layout, generator)
        y = laid_out(shape, dtype, layout, generator)
        if dtype.is_floating_point:
            alpha = round(float(torch.randn((), generator=generator)) * 2, 3)
        else:
            alpha = int(torch.randint(-3, 4, (), generator=generator))
        cases.append(Operands(x, y, alpha, f"{dtype} {layout} tensors of shape {shape}"))
    return cases


def laid_out(shape, dtype, layout: str, generator: torch.Generator) -> torch.Tensor:
    """A random tensor of ``shape`` that is a view with the given memory layout."""
    if layout == "contiguous":
        return _random(shape, dtype, generator)
    if layout == "transposed":
        return _random(shape[::-1], dtype, generator).permute(*reversed(range(len(shape))))
    if layout == "every other column":
        wide = (*shape[:-1], 2 * shape[-1])
        return _random(wide, dtype, generator)[..., ::2]
    if layout == "slice with an offset":
        tall = (shape[0] + 2, *shape[1:])
        return _random(tall, dtype, generator)[2:]
    raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")


def _random(shape, dtype, generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator).to(dtype)
    return torch.randint(-50, 50, shape, generator=generator, dtype=dtype)
