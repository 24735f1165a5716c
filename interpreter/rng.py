"""The game's seeded random generator (part of the running game's state).

A 64-bit SplitMix64 generator kept as one integer, so that copying a game state copies its
randomness for free and the same seed gives the same game on every Python version (we do
not depend on `random.shuffle`'s algorithm). Unbiased bounded integers use rejection.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def seed_state(seed: int) -> int:
    """A generator state from any integer seed (also mixes small seeds well)."""
    state = (seed * GOLDEN + 0x632BE59BD9B4E019) & MASK
    _, state = next_u64(state)
    return state


def next_u64(state: int) -> tuple[int, int]:
    """One 64-bit output and the next state."""
    state = (state + GOLDEN) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31), state


def below(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in [0, n) and the next state."""
    if n <= 0:
        raise ValueError("empty range")
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        value, state = next_u64(state)
        if value < limit:
            return value % n, state


def shuffle(items: list, state: int) -> int:
    """Fisher-Yates shuffle in place; returns the next state.

    The same draws as calling `below(state, i + 1)` for i from the end, written out in one
    loop (decks are shuffled often: this is the generator's hot spot).
    """
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            state = (state + GOLDEN) & MASK
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            z ^= z >> 31
            if z < limit:
                break
        j = z % n
        items[i], items[j] = items[j], items[i]
    return state


def derive(seed: int, *salt: int) -> int:
    """An independent seed for a sub-stream (an agent's own generator, game k of a batch)."""
    state = seed_state(seed)
    for s in salt:
        state = seed_state(state ^ (s * 0xD1B54A32D192ED03 & MASK))
    return state
