"""The agent interface and the registry of agents by name."""

from __future__ import annotations

from dataclasses import dataclass


class AgentSpecError(ValueError):
    """An agent name or parameter that does not exist or does not parse."""


@dataclass
class SeatView:
    """What an agent may use to decide: its seat's observation and the decision."""
    match: object        # the Match; agents use only the methods below
    seat: int            # 0-based

    @property
    def decision(self):
        """The decision as this seat may read it: labels never name cards it cannot see."""
        return self.match.decision_for(self.seat)

    @property
    def options(self) -> list:
        return self.match.legal_options

    def observation(self) -> dict:
        return self.match.observation(self.seat)


class Agent:
    name = "agent"
    # Does it read what its seat knows (observations, samples)? A game whose agents all
    # answer without looking need not keep knowledge (knowledge.py), which costs time.
    reads_knowledge = True

    def choose(self, view: SeatView) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    def get_state(self):
        """What to save so that a resumed game continues exactly (JSON-able), or None."""
        return None

    def set_state(self, state) -> None:
        pass


_REGISTRY: dict = {}


def register(name: str, factory, doc: str, params: dict | None = None) -> None:
    """Register an agent factory: `factory(seed=int, **params) -> Agent`."""
    _REGISTRY[name] = (factory, doc, params or {})


def registered_agents() -> dict:
    return {name: (doc, params) for name, (_, doc, params) in _REGISTRY.items()}


def parse_agent_spec(spec: str) -> tuple[str, dict]:
    """`mcts:iterations=500,c=1.4` -> ("mcts", {"iterations": "500", "c": "1.4"})."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    params = {}
    if rest.strip():
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise AgentSpecError(f"agent parameter `{part}` should look like key=value")
            params[key.strip()] = value.strip()
    return name, params


def split_agent_list(text: str) -> list[str]:
    """`mcts:iterations=40,depth=60,random` -> ["mcts:iterations=40,depth=60", "random"].

    Commas separate agents, but a `key=value` piece without its own `name:` continues the
    parameters of the agent before it.
    """
    out: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if "=" in piece and ":" not in piece and out:
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def switch(value: str) -> bool:
    """An agent parameter that is on or off (`memory=off`)."""
    word = value.lower()
    if word in ("on", "true", "yes", "1"):
        return True
    if word in ("off", "false", "no", "0"):
        return False
    raise ValueError(value)


switch.__name__ = "on or off"


def make_agent(spec: str, seed: int) -> Agent:
    name, params = parse_agent_spec(spec)
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise AgentSpecError(f"unknown agent `{name}`; known agents: {known}")
    factory, _, allowed = _REGISTRY[name]
    typed = {}
    for key, value in params.items():
        if key not in allowed:
            raise AgentSpecError(f"agent `{name}` has no parameter `{key}`" +
                                 (f"; parameters: {', '.join(sorted(allowed))}" if allowed else
                                  " (it takes none)"))
        kind = allowed[key][0]
        try:
            typed[key] = kind(value)
        except ValueError:
            raise AgentSpecError(f"agent `{name}`: `{key}` must be {kind.__name__}, not `{value}`") from None
    return factory(seed=seed, **typed)
