"""Agents: whatever answers decisions (pipeline: running game -> **agents**).

Every agent implements `Agent.choose(view) -> int`, where `view` is a `SeatView`: the
seat's observation, the pending decision and its legal options, nothing else. Agents are
made by name with `make_agent("random", seed=...)` (`"name:key=value,..."` for parameters).
"""

from .base import (Agent, AgentSpecError, SeatView, make_agent, parse_agent_spec, registered_agents,
                   split_agent_list)
from .random_agent import RandomAgent
from .search import GreedyAgent, MCTSAgent

__all__ = ["Agent", "AgentSpecError", "SeatView", "make_agent", "parse_agent_spec", "registered_agents",
           "split_agent_list",
           "RandomAgent", "GreedyAgent", "MCTSAgent"]
