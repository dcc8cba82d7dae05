"""The drawings the lectures show, kept out of their reading flow.

A lecture's cell says what a figure shows and calls one of these; the matplotlib code that
draws it lives here, where a reader who wants it finds it (the student edition ships this
module). Each function draws on the axes it is given and computes nothing the lecture has
not computed in front of the reader: the values come in as arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple")


def draw_storage(tensors: dict[str, torch.Tensor], ax: Axes, start_of: Callable[[torch.Tensor], int],
                 cells_of: Callable[[torch.Tensor], list[int]]) -> None:
    """Each storage as a grey row of numbered cells and, under it, one row per tensor over
    it, its cells coloured and numbered by the element's position in the tensor.
    ``start_of(t)`` tells which tensors share a storage, ``cells_of(t)`` which cells ``t``
    covers (lecture 1 writes both)."""
    groups: dict[int, list[tuple[str, torch.Tensor]]] = {}
    for name, t in tensors.items():
        groups.setdefault(start_of(t), []).append((name, t))
    row = 0.0
    for number, members in enumerate(groups.values()):
        first = members[0][1]
        n_cells = first.untyped_storage().nbytes() // first.element_size()
        ax.text(-0.4, row + 0.5, f"storage {number + 1} ({n_cells} cells)", ha="right", va="center",
                fontweight="bold")
        for i in range(n_cells):
            ax.add_patch(Rectangle((i, row), 1, 1, facecolor="0.85", edgecolor="black"))
            ax.text(i + 0.5, row + 0.5, str(i), ha="center", va="center", style="italic")
        row += 1
        for name, t in members:
            label = f"{name}  shape={tuple(t.shape)} stride={t.stride()} offset={t.storage_offset()}"
            ax.text(-0.4, row + 0.5, label, ha="right", va="center", family="monospace")
            for i in range(n_cells):
                ax.add_patch(Rectangle((i, row), 1, 1, facecolor="white", edgecolor="0.8"))
            for k, cell in enumerate(cells_of(t)):
                ax.add_patch(Rectangle((cell, row), 1, 1, facecolor=COLOURS[number % len(COLOURS)],
                                       edgecolor="black", alpha=0.6))
                ax.text(cell + 0.5, row + 0.5, str(k), ha="center", va="center")
            row += 1
        row += 0.6  # a gap between storages
    ax.set_xlim(-0.1, max(len(cells_of(t)) for t in tensors.values()) + 0.1)
    ax.set_ylim(row, -0.1)
    ax.axis("off")


def plot_init(ax: Axes, fan_in: int, default_weight: torch.Tensor, xavier_weight: torch.Tensor) -> None:
    """Histograms of an ``nn.Linear(fan_in, fan_out)`` weight as the layer made it (grey)
    and after ``xavier_uniform_`` (blue), with both bounds as vertical lines."""
    fan_out = default_weight.shape[0]
    xavier, default = math.sqrt(6 / (fan_in + fan_out)), 1 / math.sqrt(fan_in)
    edge = 1.15 * max(xavier, default)
    bins = torch.linspace(-edge, edge, 47).tolist()
    ax.hist(default_weight.flatten().tolist(), bins=bins, color="0.6", alpha=0.7, label="new nn.Linear")
    ax.hist(xavier_weight.flatten().tolist(), bins=bins, color="tab:blue", alpha=0.6, label="xavier_uniform_")
    for x in (-xavier, xavier):
        ax.axvline(x, color="tab:blue", linestyle="--", label="±sqrt(6 / (fan_in + fan_out))" if x > 0 else None)
    for x in (-default, default):
        ax.axvline(x, color="0.3", linestyle=":", label="±1 / sqrt(fan_in)" if x > 0 else None)
    verdict = "default narrower" if fan_out < 5 * fan_in else "the same" if fan_out == 5 * fan_in else "default WIDER"
    ax.set_title(f"nn.Linear({fan_in}, {fan_out}): {verdict}", fontsize=10)
    ax.set_xlabel("weight value")


EMA_COLOURS = {0.9: "tab:orange", 0.99: "tab:green", 0.999: "tab:red"}


def draw_ema(ax: Axes, online: torch.Tensor, optimum: torch.Tensor, decays: Sequence[float],
             paths: torch.Tensor, title: str) -> None:
    """The online weight (grey), its EMA for each decay, and the optimum (dotted)."""
    ax.plot(online, color="0.75", linewidth=0.8, label="online (student)")
    for decay, path in zip(decays, paths):
        ax.plot(path, color=EMA_COLOURS.get(decay, "tab:blue"), linewidth=1.6, label=f"EMA, decay {decay}")
    ax.plot(optimum, color="black", linestyle=":", linewidth=1, label="optimum")
    ax.set_xlabel("step")
    ax.set_title(title)


def draw_run(axes: Sequence[Axes], before: torch.Tensor, after: torch.Tensor, expected: torch.Tensor,
             got: torch.Tensor, title: str) -> None:
    """Left, the caller's tensor before and after a call; right, the output the call should
    give and the one it gave: channel 0 of each, as bars."""
    index = torch.arange(before[0, 0].numel())
    left, right = axes
    left.bar(index - 0.2, before[0, 0].flatten(), width=0.4, color="tab:blue", label="before the call")
    left.bar(index + 0.2, after[0, 0].flatten(), width=0.4, color="tab:orange", label="after the call")
    left.set_title("the caller's tensor x (channel 0)")
    right.bar(index - 0.2, expected[0, 0].flatten(), width=0.4, color="tab:green", label="reference F(x) + x")
    right.bar(index + 0.2, got[0, 0].flatten(), width=0.4, color="tab:red", label="this variant")
    error = (got - expected).abs().max().item()
    right.set_title(f"block output (channel 0); largest error, all channels: {error:.2f}")
    for ax in axes:
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("element")
        ax.legend(loc="upper left", fontsize="small")
    axes[0].figure.suptitle(title)
