"""Who may import whom: the subsystems of perfatlas in layers (docs/architecture.md, Layers).

A module may import its own subsystem and any subsystem of a lower layer; the subsystems of one
layer know nothing of each other, but for the domain packages named in DOMAIN_PEERS. Every import
counts, at the top of a module or inside a function (a lazy import is still an arrow); those under
`if TYPE_CHECKING:` do not, since they never run. Frameworks sit below the domains: findings,
report and terminal draw what the domains register (their bench_, section_, summary_, findings_
and executor_ modules, found by perfatlas.common.discovery) and import none of them.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SOURCE / "perfatlas"

DOMAINS = (
    "mem",
    "cpu",
    "noise",
    "comm",
    "app",
    "parbench",
    "example",
    "profile",
    "scenario",
    "cluster",
    "experiments",
)
LAYERS = (  # lowest first
    ("common",),  # errors, units, statistics, warnings, discovery, the console
    ("launch",),  # one native program started: executables, launchers, documents
    ("machine",),  # this machine: topology, caches, CPU orders, binding and memory policy
    ("store",),  # SQLite and the result model
    ("benchmarks",),  # the Benchmark framework
    ("plan",),  # suites, plans, estimates
    ("findings",),  # the Finding framework
    ("run",),  # the runner and its executors
    ("report", "terminal"),  # the HTML and terminal frameworks
    DOMAINS,
    ("regression", "export"),  # features over every domain
    ("cli",),  # the command line
)
# The domains one domain reads the stored figures or analyses of (and never the other way).
DOMAIN_PEERS = {
    "cpu": {"mem", "app"},  # the roofline: memory bandwidth, the proxies' declared counts
    "app": {"comm"},  # the MPI proxies build on comm.mpi (MpiBenchmark, np_param), comm_atlas
    "profile": {"comm", "noise"},  # the join with the stored comm atlas, the BSP noise model
    "cluster": {"noise"},  # node asymmetry of the noise figures
    "scenario": {"parbench"},  # scenarios are built from PARbench kernels and base data
}


def layer_of(subsystem: str) -> int:
    for index, layer in enumerate(LAYERS):
        if subsystem in layer:
            return index
    raise AssertionError(f"perfatlas.{subsystem} is in no layer of tests/test_layering.py")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(SOURCE).with_suffix("").parts).removesuffix(".__init__")


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def type_checking_nodes(tree: ast.Module) -> set[int]:
    """The nodes under `if TYPE_CHECKING:` (annotations only: never imported at run time)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(inner) for body in node.body for inner in ast.walk(body)}
    return inside


def imported(path: Path, here: str | None = None) -> set[str]:
    """The perfatlas modules `path` (module `here`) imports at run time: an imported name that
    is a module counts as that module; relative imports are resolved."""
    tree = ast.parse(path.read_text())
    skipped = type_checking_nodes(tree)
    here = here or module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    known = modules()
    return {name for name in found if name in known and name != here}


def subsystem(module: str) -> str | None:
    """`perfatlas.mem.bench_latency` -> 'mem'; perfatlas itself and perfatlas.__main__ -> None."""
    parts = module.split(".")
    if len(parts) == 1 or not (PACKAGE / parts[1]).is_dir():
        return None
    return parts[1]


def arrows() -> list[tuple[str, str, str, str]]:
    """(module, imported module, its subsystem, the imported one's) for every cross-subsystem
    import."""
    found = []
    for name, path in sorted(modules().items()):
        source = subsystem(name)
        if source is None:
            continue
        for target in sorted(imported(path)):
            goal = subsystem(target)
            if goal is not None and goal != source:
                found.append((name, target, source, goal))
    return found


def allowed(source: str, goal: str) -> bool:
    if layer_of(goal) < layer_of(source):
        return True
    return goal in DOMAIN_PEERS.get(source, set())


def test_every_subsystem_is_placed_in_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    placed = {s for layer in LAYERS for s in layer}
    assert packages == placed, (packages - placed, placed - packages)
    loose = sorted(
        p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")
    )
    assert loose == [], f"modules outside a subsystem: {loose}"


def test_imports_point_down_the_layers():
    wrong = [
        f"{module} imports {target} ({source} -> {goal})"
        for module, target, source, goal in arrows()
        if not allowed(source, goal)
    ]
    assert wrong == [], "\n".join(wrong)


def test_domain_peers_are_used_and_one_way():
    used = {(source, goal) for _, _, source, goal in arrows() if source in DOMAINS}
    for source, goals in DOMAIN_PEERS.items():
        for goal in goals:
            assert (source, goal) in used, f"{source} -> {goal} is declared but not used"
            assert source not in DOMAIN_PEERS.get(goal, set()), f"{source} <-> {goal}"


def test_no_modules_import_each_other_in_a_cycle():
    """Tarjan's strongly connected components over the module graph (every import counted)."""
    graph = {name: imported(path) for name, path in modules().items()}
    graph = {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for goal in graph[node]:
            if goal not in index:
                visit(goal)
                low[node] = min(low[node], low[goal])
            elif goal in stack:
                low[node] = min(low[node], index[goal])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert cycles == []


def test_the_check_sees_lazy_imports_and_skips_type_checking_ones(tmp_path):
    module = tmp_path / "sample.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from perfatlas.cli.entry import main\n"
        "def f():\n"
        "    from perfatlas.store import database\n"
    )
    assert imported(module, "perfatlas.common.sample") == {
        "perfatlas.store",
        "perfatlas.store.database",
    }
    assert not allowed("store", "cli") and allowed("cli", "store")
    assert allowed("cpu", "mem") and not allowed("mem", "cpu")
    assert not allowed("report", "terminal") and not allowed("findings", "report")
