"""Constant analysis (checked model -> compiled program): which rules expressions compute the
same value every time they run, so the compiler may evaluate them once.

An expression is *constant* when it reads nothing of the game state: literals, game options
(fixed for a compiled program), operators, comprehensions and lambdas over constant lists,
the value-only primitives below, and calls of functions whose bodies are constant. Anything
touching cards, players, zones, variables or the random generator is not. Two uses:

- a function called with constant arguments (typically none, e.g. "every possible plan") is
  evaluated once per program and its value reused;
- a decision's `label:` lambda over plain values (texts, numbers, lists of them) is memoised
  per option value.

Values of the language are immutable (tuples, strings, ints), so sharing one is safe.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from rulesvm.dsl import ast as A
from rulesvm.dsl.primitives import PURE_PRIMITIVES, RANDOM_PRIMITIVES
from rulesvm.dsl.types import ZONE, Type

from .limits import grows

# A primitive is constant when its result depends only on its arguments (not on the state,
# the player count or the generator): the registry's `pure` flag (PURE_PRIMITIVES).

_PLAIN = frozenset({"int", "bool", "text", "none"})


def is_plain_value_type(t: Type | None) -> bool:
    """Texts, numbers, booleans and lists/tuples of them: values whose text and identity
    do not depend on the state (unlike a card, whose label follows its face)."""
    if t is None:
        return False
    if t.name in _PLAIN:
        return True
    if t.name == "list":
        return is_plain_value_type(t.elem)
    if t.name == "tuple":
        return all(is_plain_value_type(x) for x in t.items)
    return False


class ConstantAnalysis:
    """Answers `is_constant(expr, bound)` for one checked program (results are cached)."""

    def __init__(self, res, funcs: dict):
        self.res = res
        self.funcs = funcs
        self._func_memo: dict[str, bool] = {}
        self._draw_memo: dict[str, bool] | None = None
        # Callees first, so that asking about a function never recurses down a chain of calls
        # (a chain of hundreds of functions would exhaust Python's stack).
        for name in callees_first(res, funcs):
            self.func_is_constant_body(name)

    def func_is_constant_body(self, name: str) -> bool:
        """The function's body is constant once its parameters are bound to constants (a
        function that can call itself never is)."""
        if name not in self._func_memo:
            self._func_memo[name] = False          # recursion: assume not constant
            func = self.funcs[name]
            params = frozenset(p for p, _ in func.params)
            self._func_memo[name] = self.is_constant(func.decl.body, params)
        return self._func_memo[name]

    def call_is_constant(self, call: A.Call) -> bool:
        kind = self.res.calls.get(call)
        return (kind is not None and kind[0] == "func" and self.func_is_constant_body(kind[1])
                and all(self.is_constant(a, frozenset()) for a in kind[2]))

    def draws_random(self, e) -> bool:
        """Does evaluating e draw from the game's generator (a random primitive, directly or
        in a function it calls)? Such an expression must run whether or not anyone listens."""
        for x in syntax_nodes(e):
            if isinstance(x, A.Call):
                kind = self.res.calls.get(x)
                if kind is None:
                    continue
                if kind[0] == "prim" and kind[1] in RANDOM_PRIMITIVES:
                    return True
                if kind[0] == "func" and self._func_draws(kind[1]):
                    return True
        return False

    def _func_draws(self, name: str) -> bool:
        """Can a call of `name` draw from the generator: does it, or any function it can reach
        through calls, use a random primitive? (Reachability, without recursion.)"""
        if self._draw_memo is None:
            calls = {f: called_functions(self.res, fn.decl.body) & self.funcs.keys() for f, fn in self.funcs.items()}
            direct = {f for f, fn in self.funcs.items() if any(
                isinstance(x, A.Call) and (k := self.res.calls.get(x)) is not None and k[0] == "prim"
                and k[1] in RANDOM_PRIMITIVES for x in syntax_nodes(fn.decl.body))}
            memo = {}
            for f in self.funcs:
                seen, todo = {f}, [f]
                while todo and not memo.get(f):
                    g = todo.pop()
                    if g in direct:
                        memo[f] = True
                    for h in calls[g] - seen:
                        seen.add(h)
                        todo.append(h)
                memo.setdefault(f, False)
            self._draw_memo = memo
        return self._draw_memo.get(name, False)

    def is_constant(self, e, bound: frozenset) -> bool:
        if e is None or isinstance(e, (A.IntLit, A.BoolLit, A.NoneLit)):
            return True
        if isinstance(e, A.StrLit):
            return all(isinstance(p, str) or self.is_constant(p, bound) for p in e.parts)
        if isinstance(e, A.Name):
            kind = self.res.names.get(e)
            if kind is None:
                return False
            if kind[0] == "local":
                return e.id in bound
            return kind[0] == "option"
        if isinstance(e, (A.ListLit, A.TupleLit)):
            return all(self.is_constant(x, bound) for x in e.items)
        if isinstance(e, A.Unary):
            return self.is_constant(e.operand, bound)
        if isinstance(e, A.Binary):
            return self.is_constant(e.left, bound) and self.is_constant(e.right, bound)
        if isinstance(e, A.IfExpr):
            return all(self.is_constant(x, bound) for x in (e.cond, e.then, e.else_))
        if isinstance(e, A.Index):
            return self.is_constant(e.obj, bound) and self.is_constant(e.index, bound)
        if isinstance(e, A.Comprehension):
            inner = bound | {e.var}
            return (self.is_constant(e.iterable, bound) and self.is_constant(e.elem, inner)
                    and self.is_constant(e.cond, inner))
        if isinstance(e, A.Lambda):
            return self.is_constant(e.body, bound | {e.param})
        if isinstance(e, A.Call):
            kind = self.res.calls.get(e)
            if kind is None:
                return False
            if kind[0] == "prim":
                return kind[1] in PURE_PRIMITIVES and all(self.is_constant(a, bound) for a in kind[2])
            if kind[0] == "func":
                return (self.func_is_constant_body(kind[1])
                        and all(self.is_constant(a, bound) for a in kind[2]))
            return False
        return False        # attributes (card and player fields), anything new


def syntax_nodes(e):
    """Every syntax node of an expression (or statement), in no particular order."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif is_dataclass(x) and not isinstance(x, type):
            yield x
            stack.extend(getattr(x, f.name) for f in fields(x) if f.name != "span")


def paid_walks(bodies, flat, unpaid=()) -> frozenset:
    """The walks (comprehensions, calls, `in` tests) whose every run is paid for by a step
    charged before it: a walk over fewer than FREE_WALK items (a comprehension's, a
    built-in's, a slice's, an `in` test's) written there costs no more than that step (see
    limits.charge_long), so its work is bounded by the size of the rules that wrote it.

    A walk is so when it is written in a *paid context*:
    - a statement of `bodies` (each run of a statement or loop round costs a step);
    - the item or condition of a comprehension that is charged one step per item (each item
      costs a step);
    - the body of a light function called from a paid context (closures.once_call).
    A comprehension in a paid context is free when short only when its items are *flat*
    (`flat`: a Flatness; they walk nothing and call nothing): otherwise it is charged per
    item, so that what its items walk is paid. Lambdas and the bodies in `unpaid` (functions that may be called per
    item) are not paid contexts, but a comprehension written in them is charged per item, so
    its items are."""
    out = set()
    stack = [(bodies, True)] + [(body, False) for body in unpaid]
    while stack:
        x, paid = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend((y, paid) for y in x)
        elif type(x) is A.Comprehension:
            if paid and flat(x.elem) and flat(x.cond):
                out.add(x)                      # free when short: its items walk nothing
            else:
                stack.append(((x.elem, x.cond), True))
            stack.append((x.iterable, paid))    # run once, before the items
        elif type(x) is A.Lambda:
            stack.append((x.body, False))       # run per item by the built-in that takes it
        elif type(x) is A.Call or type(x) is A.Binary:
            if paid:
                out.add(x)
            stack.extend((getattr(x, f.name), paid) for f in fields(x) if f.name != "span")
        elif is_dataclass(x) and not isinstance(x, type):
            stack.extend((getattr(x, f.name), paid) for f in fields(x) if f.name != "span")
    return frozenset(out)


class _FunctionProperty:
    """A property of expressions that holds of a call when it holds of the called function's
    body: `_own(e)` says whether e has it given that the functions it names do, and which
    those are. Functions that can recurse never have it."""

    def __init__(self, res, funcs, recursive):
        self.res = res
        own = {name: self._own(f.decl.body) for name, f in funcs.items()}
        # Functions that cannot recurse call one another as a DAG: settled callees first, with
        # a stack of our own (a chain of a thousand functions must not meet Python's limit).
        self.funcs: dict[str, bool] = {}
        for name in funcs:
            stack = [name]
            while stack:
                n = stack[-1]
                if n in self.funcs:
                    stack.pop()
                elif n in recursive or n not in own:
                    self.funcs[n] = False
                    stack.pop()
                elif todo := [c for c in own[n][1] if c not in self.funcs]:
                    stack.extend(todo)
                else:
                    self.funcs[n] = own[n][0] and all(self.funcs[c] for c in own[n][1])
                    stack.pop()

    def __call__(self, e) -> bool:
        holds, callees = self._own(e)
        return holds and all(self.funcs.get(c, False) for c in callees)

    def _own(self, e) -> tuple[bool, set]:  # pragma: no cover - each property writes its own
        raise NotImplementedError


class Flatness(_FunctionProperty):
    """Does an expression walk nothing (no comprehension, lambda or `in` test) and call
    nothing that may (a zone by name; `count`; a primitive given no list, text or zone; a
    function that cannot recurse and whose body is flat)?"""

    def _own(self, e) -> tuple[bool, set]:
        callees: set[str] = set()
        types = self.res.types
        for x in syntax_nodes(e):
            t = type(x)
            if t is A.Comprehension or t is A.Lambda or (t is A.Binary and x.op in ("in", "not in")):
                return False, callees
            if t is A.Call:
                kind = self.res.calls.get(x)
                if kind is None or kind[0] == "proc":
                    return False, callees
                if kind[0] == "func":
                    callees.add(kind[1])
                elif kind[0] == "prim" and kind[1] != "count" and any(
                        grows(types.get(a)) or types.get(a) == ZONE for a in (*x.args, *(k.value for k in x.kwargs))):
                    return False, callees       # (`count` reads a length: it walks nothing)
        return True, callees


class Bounded(_FunctionProperty):
    """Is an integer expression bounded by the game files whatever the state: a literal, a
    `count` (at most MAX_ITEMS), a card's printed number (`data_field(name)`: every card's
    value of the field is a number written in the files), minus such, either branch of an `if`
    of such, or a call of a function whose body is such? Adding it cannot double a number
    (limits.may_double)."""

    def __init__(self, res, funcs, recursive, data_field):
        self.data_field = data_field
        super().__init__(res, funcs, recursive)

    def _own(self, e) -> tuple[bool, set]:
        callees: set[str] = set()
        todo = [e]
        while todo:
            x = todo.pop()
            t = type(x)
            if t is A.IntLit:
                continue
            if t is A.Unary and x.op == "-":
                todo.append(x.operand)
            elif t is A.IfExpr:
                todo += [x.then, x.else_]
            elif t is A.Attr and self.res.attrs.get(x, ("",))[0] == "field" and self.data_field(x.name):
                continue
            elif t is A.Call and (kind := self.res.calls.get(x)) is not None and kind[0] in ("func", "prim"):
                if kind[0] == "func":
                    callees.add(kind[1])
                elif kind[1] != "count":
                    return False, callees
            else:
                return False, callees
        return True, callees


def called(res, e, kind: str) -> set[str]:
    """The names of the `func`s (kind "func") or `proc`s (kind "proc") e calls directly."""
    out: set[str] = set()
    for x in syntax_nodes(e):
        if isinstance(x, A.Call):
            k = res.calls.get(x)
            if k is not None and k[0] == kind:
                out.add(k[1])
    return out


def called_functions(res, e) -> set[str]:
    """The names of the `func`s an expression calls directly."""
    return called(res, e, "func")


def _cyclic(calls: dict) -> frozenset:
    """The names that can reach themselves in a call graph {name: names it calls}."""
    out = set()
    for name in calls:
        seen, todo = set(), list(calls[name])
        while todo:
            k = todo.pop()
            if k == name:
                out.add(name)
                break
            if k not in seen and k in calls:
                seen.add(k)
                todo.extend(calls[k])
    return frozenset(out)


def recursive_functions(res, funcs: dict) -> frozenset:
    """The `func`s that can call themselves, directly or through others: only these can
    make a call take unbounded work (the others' bodies are expressions of bounded size)."""
    return _cyclic({name: called_functions(res, f.decl.body) for name, f in funcs.items()})


def callees_first(res, funcs: dict) -> list[str]:
    """The `func`s in an order where a function comes after those it calls (but in cycles),
    found without recursion: compiling them in this order never compiles a callee inside its
    caller's compilation, so a chain of hundreds of functions does not exhaust Python's stack."""
    calls = {name: sorted(called_functions(res, f.decl.body) & funcs.keys()) for name, f in funcs.items()}
    order, done = [], set()
    for root in funcs:
        stack = [(root, iter(calls[root]))]
        if root in done:
            continue
        done.add(root)
        while stack:
            name, todo = stack[-1]
            nxt = next((c for c in todo if c not in done), None)
            if nxt is None:
                stack.pop()
                order.append(name)
            else:
                done.add(nxt)
                stack.append((nxt, iter(calls[nxt])))
    return order


def call_weights(res, funcs: dict, recursive: frozenset, cap: int) -> dict:
    """How many calls one call of each non-recursive `func` may make in all, itself included:
    1 plus the weights of the calls written in its body (a recursive callee counts 1: its
    calls are counted as they happen). A chain of functions each calling the next twice has
    weights 1, 3, 7...: bounded, but exponential in the rules' size. Capped at `cap`."""
    weights: dict = {}
    for name in callees_first(res, funcs):          # callees first: their weights are known
        if name in recursive:
            weights[name] = 1
            continue
        total = 1
        for x in syntax_nodes(funcs[name].decl.body):
            if isinstance(x, A.Call):
                k = res.calls.get(x)
                if k is not None and k[0] == "func":
                    total = min(cap, total + (1 if k[1] in recursive else weights.get(k[1], 1)))
        weights[name] = total
    return weights


def recursive_procedures(res, procs: dict) -> frozenset:
    """The procedures (of any kind) that can call themselves, directly or through others."""
    return _cyclic({name: called(res, p.decl.body, "proc") for name, p in procs.items()})
