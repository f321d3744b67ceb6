"""A formula as circuits: one compiled SDD, turned into a cirkit circuit (SPL) and a KLay circuit (SL, MAP).

:func:`constraint_for` compiles a CNF once (auxiliaries quantified, :mod:`autonesy.tools.compile`;
the vtree is chosen for shallow circuits, :func:`compile_for_circuits`) and caches the result per
formula; each circuit is built on first use and cached on the :class:`Constraint`. Every circuit is
over the N task variables, in DIMACS order (column j of a (B, N) tensor is variable j + 1).

**SDD → cirkit.** The symbolic circuit is built directly from the PySDD nodes (not through
``SDD.load(...).build_circuit()``, whose smoothing and pruning take seconds on SDDs of a thousand
nodes, which crashes on trivial SDDs, and whose default leaves and weights are learnable):

- a literal becomes a parameter-free :class:`~autonesy.nesy.cirkit_ext.LogitLiteral` leaf;
- a decision node becomes a sum layer over its elements with **frozen weights** (``learnable=False``,
  1 per element); an element is a Hadamard product (prime, sub); elements whose prime or sub is ⊥
  are dropped, ⊤ children are dropped from products, nested products are flattened, and sum layers
  at the same depth are padded to one arity (weight 0 on the padding) so that cirkit folds them
  into one tensor operation;
- the root is multiplied by ``(y_j ∨ ¬y_j)`` for every task variable j the SDD does not mention, so
  the circuit's scope is always all N variables. This is also what makes the trivial SDDs work:
  ⊤ becomes Π_j (y_j ∨ ¬y_j) and a single literal ℓ becomes ℓ · Π_{j≠var(ℓ)} (y_j ∨ ¬y_j).
  ⊥ has no circuit: :class:`UnsatisfiableConstraint`.

The circuit is not smoothed inside. That is exact here because every pair of literal leaves sums
to one — σ(l) + σ(−l) = 1 for soft evidence, and the two indicators of a variable sum to one — so a
variable missing from one branch of a disjunction contributes the factor 1 it would contribute
after smoothing (the same reason KLay, whose circuits are not smooth either, is exact on
probabilities). The missing-variable factors at the root are there for the scope, not the value.

**SDD → KLay.** ``klay.Circuit().add_sdd(node)``; modules are made with ``compile=False`` (torch.compile
costs 26–31 s per circuit on CPU). KLay reads (B, N) log-probabilities of the positive and the
negative literals; both are passed explicitly (log σ(l), log σ(−l)), never weights that do not
sum to one per variable (KLay circuits are not smooth). KLay handles ⊤, ⊥, single literals and
absent variables itself (checked in the tests).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import (
    DEFAULT_TIME_LIMIT_S,
    CompilationBudgetExceeded,
    CompiledSDD,
    compile_from_models,
    compile_in_child,
    elimination_order,
    sdd_postorder,
)
from autonesy.tools.elimination import eliminate_auxiliaries
from autonesy.tools.enumeration import CountTimedOut, EnumerationCapReached, enumerate_models
from autonesy.tools.errors import AutonesyError

if TYPE_CHECKING:
    import torch


class UnsatisfiableConstraint(AutonesyError, ValueError):
    """The formula has no model over the task variables: no predictor can be trained on it."""


@dataclass(eq=False)
class Constraint:
    """A compiled formula over N task variables and the circuits built from it (cached)."""

    sdd: CompiledSDD
    name: str = ""
    choice: dict = field(default_factory=dict)  # the SDDs compared when it was compiled (compile_for_circuits)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def num_vars(self) -> int:
        """The number of task variables (the predictor's outputs)."""
        return self.sdd.num_task_vars

    @property
    def is_false(self) -> bool:
        """Whether no assignment satisfies the formula."""
        return self.sdd.node.is_false()

    @property
    def is_true(self) -> bool:
        """Whether every assignment satisfies the formula."""
        return self.sdd.node.is_true()

    @cached_property
    def model_count(self) -> int:
        """The formula's model count over the task variables."""
        return self.sdd.model_count()

    @property
    def sdd_size(self) -> int:
        """The SDD's size (circuit cost of SPL and SL)."""
        return self.sdd.size

    def require_satisfiable(self) -> None:
        """Refuse an unsatisfiable formula: its probability is zero everywhere, so SPL and SL cannot be trained on it."""
        if self.is_false:
            raise UnsatisfiableConstraint(
                f"{self.name or 'the formula'} is unsatisfiable over its {self.num_vars} task variables: "
                "p(y|x;K) and WMC(K, p) are zero everywhere, so SPL and SL cannot be trained on it"
            )

    def evaluate(self, y: np.ndarray) -> np.ndarray:
        """Whether each row of a (B, N) 0/1 array satisfies the formula (exact, on the SDD)."""
        y = np.asarray(y)
        if self.is_false:
            return np.zeros(len(y), dtype=bool)
        if self.is_true:
            return np.ones(len(y), dtype=bool)
        return self.sdd.evaluate(y)

    # ------------------------------------------------------------------ circuits (built once)
    def cirkit_symbolic(self):
        """The symbolic cirkit circuit with soft-evidence leaves and frozen unit weights."""
        self.require_satisfiable()
        return sdd_to_cirkit(self.sdd.node, self.num_vars)

    def cirkit_circuit(self) -> torch.nn.Module:
        """The compiled (folded, unclamped log-semiring) cirkit circuit: (B, N) logits → (B, 1, 1)."""
        with self._lock:
            if "_cirkit" not in self.__dict__:
                from autonesy.nesy.cirkit_ext import pipeline

                circuit = pipeline().compile(self.cirkit_symbolic())
                for parameter in circuit.parameters():
                    parameter.requires_grad_(False)
                self.__dict__["_cirkit"] = circuit
            return self.__dict__["_cirkit"]

    def klay_circuit(self):
        """The KLay circuit for semantic loss, built once per constraint (thread-safe)."""
        with self._lock:
            if "_klay" not in self.__dict__:
                import klay

                self.require_satisfiable()
                circuit = klay.Circuit()
                circuit.add_sdd(self.sdd.node)
                self.__dict__["_klay"] = circuit
            return self.__dict__["_klay"]

    def klay_module(self, semiring: str = "log") -> torch.nn.Module:
        """KLay's torch module (``compile=False``): (B, N) log p(y_i=1), (B, N) log p(y_i=0) → (B, 1)."""
        key = f"_klay_{semiring}"
        circuit = self.klay_circuit()
        with self._lock:
            if key not in self.__dict__:
                self.__dict__[key] = circuit.to_torch_module(semiring=semiring, compile=False)
            return self.__dict__[key]


def sdd_to_cirkit(node, num_vars: int, literal_factory=None, pad_arities: bool = True, flatten_products: bool = True):
    """Symbolic cirkit circuit of an SDD over variables 1..``num_vars`` (see the module docstring).

    ``literal_factory(var0, negated)`` makes the leaf of a literal (0-based variable); by default a
    :class:`LogitLiteral`. With ``pad_arities``, every sum layer is widened to the largest arity
    among the sum layers at the same depth, the extra inputs repeating its first input under weight
    0: cirkit folds only layers of equal arity that sit at the same depth, so this turns several
    small tensor operations per depth into one (exact: the padded terms are multiplied by 0).
    With ``flatten_products``, a product whose input is a product takes that product's inputs
    instead (SDDs over right-linear parts of the vtree nest binary products dozens deep; each level
    costs a folded layer).
    """
    import numpy as np
    from cirkit.symbolic.circuit import Circuit
    from cirkit.symbolic.initializers import ConstantTensorInitializer
    from cirkit.symbolic.layers import HadamardLayer, SumLayer
    from cirkit.symbolic.parameters import Parameter, TensorParameter
    from cirkit.utils.scope import Scope

    from autonesy.nesy.cirkit_ext import LogitLiteral

    if node.is_false():
        raise UnsatisfiableConstraint("an unsatisfiable SDD has no circuit")
    if literal_factory is None:

        def literal_factory(var0: int, negated: bool):
            return LogitLiteral(Scope([var0]), 1, negated=negated)

    dag = _Dag(num_vars, flatten_products)  # 1. an abstract DAG: a literal or a gate over earlier nodes
    output = dag.of_sdd(node)
    nodes = dag.nodes
    depth = _depths(nodes)  # 2. depths and the padded arities
    width = _sum_widths(nodes, depth) if pad_arities else {}

    # 3. cirkit layers, frozen
    def frozen(values: np.ndarray) -> Parameter:
        return Parameter.from_input(
            TensorParameter(*values.shape, initializer=ConstantTensorInitializer(values), learnable=False)
        )

    layers: list = [None] * len(nodes)
    in_layers: dict = {}
    for i, dag_node in enumerate(nodes):
        if isinstance(dag_node, int):
            layer = literal_factory(abs(dag_node) - 1, dag_node < 0)
            in_layers[layer] = []
        elif dag_node.kind == "and":
            layer = HadamardLayer(1, arity=len(dag_node.children))
            in_layers[layer] = [layers[c] for c in dag_node.children]
        else:
            children = dag_node.children
            arity = width.get(depth[i], len(children))
            weights = np.zeros((1, arity))
            weights[0, : len(children)] = 1.0
            padded = list(children) + [children[0]] * (arity - len(children))
            layer = SumLayer(1, 1, arity=arity, weight=frozen(weights))
            in_layers[layer] = [layers[c] for c in padded]
        layers[i] = layer
    reachable = _reachable(output, nodes)
    kept = {layers[i]: in_layers[layers[i]] for i in reachable}
    return Circuit(list(kept), kept, [layers[output]])


@dataclass(frozen=True)
class _Gate:
    """A product (``"and"``) or sum (``"or"``) of earlier nodes of :func:`sdd_to_cirkit`'s DAG, by index."""

    kind: str
    children: list[int]


_DagNode = int | _Gate  # a literal (signed DIMACS) or a gate
_TRUE, _FALSE = -1, -2  # what an SDD node became when it is a constant, instead of a DAG index


class _Dag:
    """The abstract DAG of an SDD over variables 1..``num_vars``: literals and gates over earlier nodes,
    by index (children always precede their parents). With ``flatten_products``, a product whose input
    is a product takes that product's inputs instead."""

    def __init__(self, num_vars: int, flatten_products: bool) -> None:
        self.num_vars = num_vars
        self.flatten_products = flatten_products
        self.nodes: list[_DagNode] = []
        self._leaves: dict[int, int] = {}

    def leaf(self, lit: int) -> int:
        """The index of a literal's leaf, made on first use."""
        if lit not in self._leaves:
            if abs(lit) > self.num_vars:
                raise ValueError(f"the SDD mentions variable {abs(lit)} > {self.num_vars}: quantify auxiliaries first")
            self._leaves[lit] = len(self.nodes)
            self.nodes.append(lit)
        return self._leaves[lit]

    def gate(self, kind: str, children: list[int]) -> int:
        """The index of a new gate (a product of one input is that input)."""
        if kind == "and":
            if self.flatten_products:  # (a ∧ (b ∧ c)) → (a ∧ b ∧ c): one level instead of two
                children = [g for c in children for g in self._product_inputs(c)]
            if len(children) == 1:
                return children[0]
        self.nodes.append(_Gate(kind, list(children)))
        return len(self.nodes) - 1

    def _product_inputs(self, index: int) -> list[int]:
        dag_node = self.nodes[index]
        return dag_node.children if isinstance(dag_node, _Gate) and dag_node.kind == "and" else [index]

    def of_sdd(self, node) -> int:
        """Convert the SDD (bottom-up) and return the output: a product of the root and of a
        ``v ∨ ¬v`` for every variable the SDD does not mention, under a sum when it is a lone literal."""
        converted: dict[int, int] = {}
        used_vars: set[int] = set()
        for current in sdd_postorder(node):
            if current.is_true():
                converted[current.id] = _TRUE
            elif current.is_false():
                converted[current.id] = _FALSE
            elif current.is_literal():
                converted[current.id] = self.leaf(current.literal)
                used_vars.add(abs(current.literal))
            else:
                converted[current.id] = self._decision(current, converted)
        root = converted[node.id]
        if root == _FALSE:
            raise UnsatisfiableConstraint("an unsatisfiable SDD has no circuit")
        factors = [] if root == _TRUE else [root]
        for var in range(1, self.num_vars + 1):
            if var not in used_vars:
                factors.append(self.gate("or", [self.leaf(var), self.leaf(-var)]))
        lone = self.nodes[factors[0]] if len(factors) == 1 else None
        if lone is not None and not (isinstance(lone, _Gate) and lone.kind == "or"):
            factors = [self.gate("or", [factors[0]])]  # a lone literal: give the circuit a unit-weight sum root
        return self.gate("and", factors)

    def _decision(self, current, converted: dict[int, int]) -> int:
        """A decision node: the sum of its (prime ∧ sub) elements, constants folded."""
        elements: list[int] = []
        for prime, sub in current.elements():
            p, s = converted[prime.id], converted[sub.id]
            if p == _FALSE or s == _FALSE:
                continue
            parts = [c for c in (p, s) if c != _TRUE]
            if not parts:
                return _TRUE
            elements.append(self.gate("and", parts))
        if not elements:
            return _FALSE
        return elements[0] if len(elements) == 1 else self.gate("or", elements)


def _depths(nodes: list[_DagNode]) -> list[int]:
    """Each node's longest path from the leaves, as cirkit's folding sees it."""
    depth = [0] * len(nodes)
    for i, dag_node in enumerate(nodes):  # children always precede their parents
        if isinstance(dag_node, _Gate):
            depth[i] = 1 + max(depth[c] for c in dag_node.children)
    return depth


def _sum_widths(nodes: list[_DagNode], depth: list[int]) -> dict[int, int]:
    """The largest arity among the sum gates at each depth (what every sum there is padded to)."""
    width: dict[int, int] = {}
    for i, dag_node in enumerate(nodes):
        if isinstance(dag_node, _Gate) and dag_node.kind == "or":
            width[depth[i]] = max(width.get(depth[i], 0), len(dag_node.children))
    return width


def _reachable(output: int, nodes: list[_DagNode]) -> list[int]:
    seen, stack = {output}, [output]
    while stack:
        dag_node = nodes[stack.pop()]
        if isinstance(dag_node, _Gate):
            for c in dag_node.children:
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return sorted(seen)


# ---------------------------------------------------------------------------------------------
# one Constraint per formula, compiled once per process
_CACHE: dict[tuple, Constraint] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_LIMIT = 64


def sdd_height(node) -> int:
    """Longest chain of decision nodes from the root to a literal (0 for literals and constants)."""
    heights: dict[int, int] = {}
    for current in sdd_postorder(node):
        heights[current.id] = (
            1 + max(max(heights[p.id], heights[s.id]) for p, s in current.elements()) if current.is_decision() else 0
        )
    return heights[node.id]


CIRCUIT_SHAPES = (
    ("balanced", False),
    ("balanced", True),
    ("right", False),
    ("vertical", False),
)  # True: elimination order
CANDIDATE_MAX_S = 10.0
MODEL_VTREES = ("balanced", "right")  # a vertical vtree blows up on model sets (sudoku: 226,399 nodes)
MODELS_CAP = 2_000  # up to this many models the candidates are built from the models (no clause blow-up)
NODES_PER_LITERAL = 50  # size budget of an unminimised candidate, relative to the formula


def circuit_cost(sdd: CompiledSDD) -> float:
    """Rough CPU cost of evaluating an SDD's circuit on a batch: one unit per level of depth (each
    level is a few tensor operations whose fixed overhead dominates on CPU) plus one per 250 elements."""
    return sdd_height(sdd.node) + sdd.size / 250


def compile_for_circuits(formula: CNF, *, time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> tuple[CompiledSDD, dict]:
    """An SDD of ``formula`` shaped for fast batched evaluation, and the comparison that chose it.

    PySDD's vtree minimisation (our default for counting) minimises *size* and tends towards deep,
    right-linear vtrees: the exactly-one over 100 classes compiles to 427 elements but 90 levels,
    and KLay and cirkit pay a fixed cost per level (152 ms and 110 ms per forward + backward at
    B = 256 against 7.5 ms and 11 ms for the 824-element, 7-level SDD of a balanced vtree without
    minimisation). So the unminimised SDDs of a balanced (over the natural and over a min-fill
    elimination order), a right-linear and a vertical vtree are compared with the minimised one by :func:`circuit_cost` (height and size, measured on each), and
    the cheapest is kept. A formula with at most ``MODELS_CAP`` models has its candidates (balanced
    and right-linear) built from the models (:func:`~autonesy.tools.compile.compile_from_models`); otherwise each unminimised
    candidate is compiled from the clauses under a size budget of ``NODES_PER_LITERAL`` nodes per
    literal of the formula, in a child process that is killed at the time limit (one conjoin can take
    minutes). Candidates that overflow are reported in the returned comparison, never
    dropped silently. The formula's auxiliaries are first eliminated by resolution where that stays
    small (:func:`~autonesy.tools.elimination.eliminate_auxiliaries`; the projection is unchanged):
    road-r's SDDs otherwise grow through its 39 counter auxiliaries (22 s, height 19; 0.3 s without).
    """
    formula = eliminate_auxiliaries(formula)
    budget = NODES_PER_LITERAL * max(1, sum(len(c) for c in formula.clauses))
    candidates: dict[str, CompiledSDD] = {}
    choice: dict = {"candidates": {}}
    try:
        models = enumerate_models(formula, MODELS_CAP, min(5.0, time_limit_s / 4))
    except (EnumerationCapReached, CountTimedOut):
        models = None
        candidates["minimised"] = compile_in_child(formula, time_limit_s=time_limit_s)
    shapes = CIRCUIT_SHAPES if models is None else tuple((vtree, False) for vtree in MODEL_VTREES)
    for vtree, by_elimination in shapes:
        name = f"{vtree}-elimination-order" if by_elimination else vtree
        # each further candidate gets at most ten times what the fastest so far took (at least 1 s)
        fastest = min((sdd.seconds for sdd in candidates.values()), default=float("inf"))
        limit = min(CANDIDATE_MAX_S, time_limit_s, max(1.0, 10 * fastest))
        try:
            if models is not None:
                candidates[name] = compile_from_models(models, formula.num_task_vars, vtree)
            else:
                order = elimination_order(formula) if by_elimination else None
                candidates[name] = compile_in_child(
                    formula, minimize=False, vtree_type=vtree, var_order=order, time_limit_s=limit, size_limit=budget
                )
        except CompilationBudgetExceeded as error:
            choice["candidates"][name] = {"overflow": str(error)}
    for name, sdd in candidates.items():
        choice["candidates"][name] = {
            "size": sdd.size,
            "height": sdd_height(sdd.node),
            "cost": circuit_cost(sdd),
            "seconds": sdd.seconds,
        }
    choice["chosen"] = min(candidates, key=lambda name: circuit_cost(candidates[name]))
    return candidates[choice["chosen"]], choice


def constraint_for(
    formula: CNF | CompiledSDD, *, name: str = "", time_limit_s: float = DEFAULT_TIME_LIMIT_S
) -> Constraint:
    """The cached :class:`Constraint` of a CNF (compiled by :func:`compile_for_circuits`) or of an
    already compiled SDD."""
    if isinstance(formula, CompiledSDD):
        return Constraint(formula, name=name)
    key = (formula.num_task_vars, formula.num_vars, formula.clauses)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    sdd, choice = compile_for_circuits(formula, time_limit_s=time_limit_s)
    constraint = Constraint(sdd, name=name, choice=choice)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        return _CACHE.setdefault(key, constraint)
