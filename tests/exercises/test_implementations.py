"""Switch-off names computations (hole 7): attnlib.grading.implementations holds every implementation of the
equations the sets switch off. These tests enumerate attnlib's public callables and torch's (torch,
torch.nn.functional, torch._C._nn, torch._C._VariableFunctions, torch.ops.aten, torch.special, torch.sparse,
torch.nn) for softmax, attention, normalisation and cross-entropy and find each in the table (an
implementation of an equation, or one of NOT_IMPLEMENTATIONS with its reason), then, in a sandbox of every
set, find each implementation of what that set switches off switched off: the Python objects replaced, and
every operator that runs on a CPU failing when called."""

import importlib
import inspect
import pkgutil
import re

import pytest
import torch
from attnlib_grader.sandbox import Sandbox
from attnlib_grader.switching import resolve, resolve_equations
from exercise_helpers import SETS, exercises

import attnlib
from attnlib.grading.implementations import EQUATIONS, NOT_IMPLEMENTATIONS

FAMILY = re.compile(
    r"softmax|softmin|attention|attn|sdp|multi_?head|norm|cross_?entropy|nll|kl_?div|cosine|attend", re.I
)
CALLS = re.compile(
    r"softmax|\battend\(|scaled_dot_product_attention|cross_entropy|nll_loss|cosine_similarity|"
    r"normalize\(|layer_norm|\.attention\("
)
PATHS = {d for e in EQUATIONS.values() for d in e.implementations}
OPERATORS = {op for e in EQUATIONS.values() for op in e.operators}
NAMESPACES = {
    "torch": torch,
    "torch.nn.functional": torch.nn.functional,
    "torch._C._nn": torch._C._nn,
    "torch._C._VariableFunctions": torch._C._VariableFunctions,
    "torch.special": torch.special,
    "torch.sparse": torch.sparse,
    "torch.nn": torch.nn,
}


def torch_callables() -> list[tuple[str, str]]:
    """(namespace, name) of every callable of the namespaces, and every aten operator, in the families."""
    found = [
        (space, name)
        for space, module in NAMESPACES.items()
        for name in dir(module)
        if FAMILY.search(name) and callable(getattr(module, name, None)) and not name.startswith("__")
    ]
    ops = {
        n.split("::")[1].split(".")[0]
        for n in torch._C._dispatch_get_all_op_names()
        if n.startswith("aten::")
    }
    return found + [("torch.ops.aten", op) for op in sorted(ops) if FAMILY.search(op)]


def attnlib_callables() -> list[str]:
    """Dotted paths of attnlib's public functions, classes, methods named for the families or using them."""
    found = []
    for info in pkgutil.walk_packages(attnlib.__path__, "attnlib."):
        if info.name.startswith("attnlib.grading"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not callable(obj) or getattr(obj, "__module__", "") != info.name:
                continue
            members = [(f"{info.name}.{name}", obj)]
            if inspect.isclass(obj):
                members += [
                    (f"{info.name}.{name}.{k}", v)
                    for k, v in vars(obj).items()
                    if inspect.isfunction(v) and (not k.startswith("_") or k == "__call__")
                ]
            for path, member in members:
                source = inspect.getsource(member) if inspect.isfunction(member) else ""
                if FAMILY.search(path.rpartition(".")[2]) or CALLS.search(source):
                    found.append(path)
    return found


def classified(path: str, name: str) -> bool:
    owner = path.rpartition(".")[0]
    return (
        path in PATHS
        or name in OPERATORS
        or name in NOT_IMPLEMENTATIONS
        or path in NOT_IMPLEMENTATIONS
        or owner in PATHS  # a method of a class the table lists (switched off with its class)
        or any(p.startswith(path + ".") for p in PATHS)  # a class whose computing methods the table lists
        or any(resolve(p) is not None and resolve(p) is resolve(path) for p in PATHS)  # another name of one
    )


def test_the_enumeration_finds_each_family():
    """Positive control: the enumeration sees the callables it must see."""
    torch_names = {f"{space}.{name}" for space, name in torch_callables()}
    for expected in (
        "torch._safe_softmax",
        "torch.nn.functional.kl_div",
        "torch.ops.aten._masked_softmax",
        "torch._C._nn.cross_entropy_loss",
        "torch.nn.functional.layer_norm",
        "torch.sparse.softmax",
        "torch.special.log_softmax",
        "torch.nn.MultiheadAttention",
    ):
        assert expected in torch_names, expected
    assert {"attnlib.masking.masked_softmax", "attnlib.train.loss_fn", "attnlib.scores.cosine"} <= set(
        attnlib_callables()
    )


def test_every_torch_callable_of_the_four_families_is_in_the_table():
    missing = [
        f"{space}.{name}" for space, name in torch_callables() if not classified(f"{space}.{name}", name)
    ]
    assert not missing, f"add these to attnlib/grading/implementations.py: {missing}"


def test_every_attnlib_callable_of_the_four_families_is_in_the_table():
    missing = [path for path in attnlib_callables() if not classified(path, path.rpartition(".")[2])]
    assert not missing, f"add these to attnlib/grading/implementations.py: {missing}"


# How to call each operator on a CPU (the arguments of torch.ops.aten.<op>): built in the test and in the
# sandbox from the same source. An operator without a probe has no CPU kernel (checked below).
PROBES = """
import torch


def probes():
    x, mask = torch.randn(2, 3, 4), torch.rand(2, 3, 4) > 0.3
    q = torch.randn(1, 2, 3, 4)
    logits, targets = torch.randn(3, 5), torch.tensor([0, 2, 4])
    E, w = 4, lambda *shape: torch.randn(*shape) / 2
    return {
        "softmax": (x, -1),
        "_softmax": (x, -1, False),
        "log_softmax": (x, -1),
        "_log_softmax": (x, -1, False),
        "special_softmax": (x, -1),
        "special_log_softmax": (x, -1),
        "_safe_softmax": (x, -1),
        "_masked_softmax": (x, ~mask, -1, None),
        "_sparse_softmax": (x.to_sparse(), -1),
        "_sparse_log_softmax": (x.to_sparse(), -1),
        "scaled_dot_product_attention": (q, q, q),
        "_scaled_dot_product_attention_math": (q, q, q),
        "_scaled_dot_product_flash_attention_for_cpu": (q, q, q),
        "_native_multi_head_attention": (x[:1], x[:1], x[:1], E, 2, w(3 * E, E), w(3 * E), w(E, E), w(E)),
        "_transformer_encoder_layer_fwd": (x[:1], E, 2, w(3 * E, E), w(3 * E), w(E, E), w(E), False, False,
                                           1e-5, w(E), w(E), w(E), w(E), w(8, E), w(8), w(E, 8), w(E)),
        "cosine_similarity": (x, x, -1),
        "cosine_embedding_loss": (x[0], x[1], torch.ones(3)),
        "cross_entropy_loss": (logits, targets),
        "nll_loss": (logits.log_softmax(-1), targets),
        "nll_loss_nd": (logits.log_softmax(-1), targets),
        "nll_loss_forward": (logits.log_softmax(-1), targets, None, 1, -100),
        "nll_loss2d": (logits.log_softmax(-1)[..., None, None], targets[..., None, None]),
        "nll_loss2d_forward": (
            logits.log_softmax(-1)[..., None, None], targets[..., None, None], None, 1, -100),
        "kl_div": (logits.log_softmax(-1), logits.softmax(-1)),
        "binary_cross_entropy": (logits.sigmoid(), torch.ones(3, 5)),
        "binary_cross_entropy_with_logits": (logits, torch.ones(3, 5)),
        "poisson_nll_loss": (logits, logits.exp(), True, False, 1e-8, 1),
        "layer_norm": (x, [4]),
        "native_layer_norm": (x, [4], None, None, 1e-5),
        "rms_norm": (x, [4]),
        "_fused_rms_norm": (x, [4], None, 1e-5),
        "batch_norm": (x, None, None, None, None, True, 0.1, 1e-5, False),
        "native_batch_norm": (x, None, None, None, None, True, 0.1, 1e-5),
        "group_norm": (x, 1),
        "native_group_norm": (x, None, None, 2, 3, 4, 1, 1e-5),
        "instance_norm": (x, None, None, None, None, True, 0.1, 1e-5, False),
    }
"""


def probes() -> dict:
    space: dict = {}
    exec(PROBES, space)
    return space["probes"]()


def cpu_kernel(op: str) -> bool:
    """Whether the dispatcher has a kernel that runs operator ``op`` on a CPU tensor."""
    keys = (
        "CPU",
        "SparseCPU",
        "CompositeImplicitAutograd",
        "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional",
    )
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", key) for key in keys)


def test_every_operator_that_runs_on_a_cpu_has_a_probe():
    """Each operator of the table either runs on a CPU, and then its probe runs here (outside a sandbox), or
    has no CPU kernel at all (a CUDA, MPS or Triton one: not a road on a grader)."""
    table = probes()
    for op in sorted(OPERATORS):
        if op in table:
            getattr(torch.ops.aten, op)(*table[op])
        elif op == "_scaled_dot_product_fused_attention_overrideable":  # a stub for other devices' kernels
            q = torch.randn(1, 2, 3, 4)
            with pytest.raises(NotImplementedError, match="privateuse1"):
                getattr(torch.ops.aten, op)(q, q, q)
        elif op != "_nested_tensor_softmax_with_shape":  # nested tensors only: runs _softmax's kernels
            assert not cpu_kernel(op), f"{op} runs on a CPU: give it a probe"


AUDIT = (
    PROBES
    + '''
import types


def audit(paths, operators):
    """Which implementations still run in this sandbox: paths whose object is not a switched-off stand-in,
    operators whose probe does not fail as switched off."""
    from attnlib_grader.switching import resolve
    alive = []
    for path in paths:
        obj = resolve(path)
        stub = obj is None or (isinstance(obj, types.FunctionType) and obj.__code__.co_name == "off") or (
            isinstance(obj, type) and getattr(getattr(obj, "__init__", None), "__code__", None) is not None
            and obj.__init__.__code__.co_name == "off")
        if not stub:
            alive.append(path)
    table = probes()
    for op in operators:
        if op not in table:
            continue
        try:
            getattr(torch.ops.aten, op)(*table[op])
            alive.append(f"aten::{op}")
        except RuntimeError as e:
            if "switched off" not in str(e):
                alive.append(f"aten::{op} ({str(e)[:80]})")
    return alive
'''
)


@pytest.mark.slow  # a sandbox per set
@pytest.mark.parametrize("name", SETS)
def test_what_a_set_switches_off_is_switched_off_in_its_sandbox(name, tmp_path):
    equations = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb").config["switch_off"]
    dotted, operators = resolve_equations(equations)
    config = {"names": ["audit"], "switch_off": dotted, "operators": operators}
    sandbox = Sandbox([AUDIT], config, str(tmp_path))
    sandbox.start()
    try:
        alive = sandbox.call("audit", (dotted, operators), {}, 60)
    finally:
        sandbox.kill()
    assert not alive, f"{name} switches off {equations}, but these still run: {alive}"
    assert dotted  # positive control: the set switches something off
