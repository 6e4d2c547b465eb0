"""The grader's modules split along its trust boundary: imports run one way (grade -> sandbox -> isolation ->
child, the codec and the switch-off tables below them), no circle, not even through an import inside a
function, and no module too long to read (sandbox.py, the grader's end of the socket, at most 300 lines)."""

import ast

from exercise_helpers import ROOT

PACKAGE = ROOT / "grader" / "attnlib_grader"
ORDER = ["grade", "sandbox", "isolation", "child"]  # each may import those after it, never those before


def imports() -> dict[str, set[str]]:
    """{module: the attnlib_grader modules it imports anywhere in its file}."""
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attnlib_grader"):
                if node.module == "attnlib_grader":
                    found |= {alias.name for alias in node.names}
                else:
                    found.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("attnlib_grader.")}
        graph[path.stem] = found - {path.stem}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (its modules in order), or []."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_cycle_finder_finds_a_circle_through_three_modules():
    """Positive control of the next test."""
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_grader():
    graph = imports()
    assert set(ORDER) <= set(graph) and not cycle(graph), cycle(graph)


def test_imports_run_from_the_grader_down_to_the_sandboxed_child():
    graph = imports()
    for i, module in enumerate(ORDER):
        assert not graph[module] & set(ORDER[:i]), (module, graph[module])
    assert graph["child"] <= {"codec", "switching"}  # what runs inside the box imports nothing grader-side


def test_no_grader_module_is_too_long():
    lengths = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.glob("*.py")}
    assert lengths["sandbox.py"] <= 300, lengths
    assert all(n <= 400 for n in lengths.values()), lengths
