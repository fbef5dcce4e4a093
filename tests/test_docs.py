"""The manual: the MkDocs site builds with `make docs`'s own command, a broken internal link or
anchor fails that build, the README's links resolve, the tour it shows runs here, and the maps of
the code (each package's docstring, docs/architecture.md) name every module of the tree."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT_BYTES = 16_000  # a front door (what it is, how to run it, where to read on)
# Markdown links and images, [text](target) and ![alt](target), outside code spans.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def docs_command() -> list[str]:
    """The `mkdocs build ...` line of the Makefile's docs target, run by this Python."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^docs:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "the Makefile has no docs target"
    line = next(step for step in recipe.group(1).splitlines() if "mkdocs build" in step)
    return [sys.executable, "-m", "mkdocs", "build", *shlex.split(line.split("mkdocs build", 1)[1])]


def build_copy(tmp_path: Path, broken_page: str = "", broken_text: str = ""):
    """Build a copy of mkdocs.yml and docs/ (optionally with text added to one page)."""
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: run `make docs` once")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    if broken_page:
        page = tmp_path / "docs" / broken_page
        page.write_text(page.read_text() + "\n" + broken_text + "\n")
    command = [*docs_command(), "--config-file", str(tmp_path / "mkdocs.yml")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)


def test_make_docs_builds_strictly():
    assert "--strict" in docs_command()
    assert "--quiet" not in docs_command() and "-q" not in docs_command()  # it hides warnings


def test_the_site_builds_without_a_warning(tmp_path):
    result = build_copy(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "guide" / "memory.html").is_file()


def test_a_link_to_a_missing_page_fails_the_build(tmp_path):
    result = build_copy(tmp_path, "methods.md", "See [nothing](guide/no-such-page.md).")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


def test_a_link_to_a_missing_anchor_fails_the_build(tmp_path):
    result = build_copy(tmp_path, "index.md", "See [nothing](guide/noise.md#no-such-section).")
    assert result.returncode != 0
    assert "no-such-section" in result.stderr


def test_every_link_of_the_readme_leads_to_a_file_of_the_repository():
    text = re.sub(r"`[^`]*`", "", (ROOT / "README.md").read_text())
    targets = [t for t in LINK.findall(text) if "://" not in t and not t.startswith("#")]
    assert targets, "the README links nowhere"
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_readme_is_a_front_door_with_its_picture():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < README_LIMIT_BYTES
    assert "make run" in readme and "make test" in readme
    pictures = [t for t in LINK.findall(readme) if t.endswith(".png")]
    assert len(pictures) == 1
    picture = ROOT / pictures[0]
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert picture.stat().st_size < 300_000


def test_no_file_cites_a_design_document_the_repository_lacks():
    design = "DESIGN" + ".md"  # spelled apart so that this file does not cite it either
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: no list of tracked files")
    citing = [
        name
        for name in tracked
        if (ROOT / name).is_file() and design in (ROOT / name).read_text(errors="replace")
    ]
    assert not (ROOT / design).exists()
    assert not citing, f"these files cite {design}, which the repository does not contain"


def test_the_manual_cites_no_file_outside_the_repository():
    """Links resolve from their page; paths in code spans (`src/...`, `native/...`) are written
    from the repository's root."""
    up = re.compile(r"(?<![\w.])(?:\.\./)+[\w.-][\w./-]*")  # not the "..." of an elision
    outside = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text()
        spans = re.findall(r"`([^`]*)`", text)
        cited = [(page.parent, p) for t in LINK.findall(text) for p in up.findall(t)]
        cited += [(ROOT, p) for span in spans for p in up.findall(span)]
        outside += [
            f"{page.relative_to(ROOT)}: {path}"
            for base, path in cited
            if not (base / path).resolve().is_relative_to(ROOT)
        ]
    assert not outside, f"the manual cites files outside the repository: {outside}"


def test_the_tour_suite_expands_and_resolves_on_this_machine():
    """README's `perfatlas run docs/tour.toml`: its steps expand and resolve here, as `run` does
    before the first measurement."""
    from perfatlas.machine.topology import Machine
    from perfatlas.plan.suite import expand, load

    machine = Machine.detect()
    measurements = expand(load(str(ROOT / "docs" / "tour.toml")), machine)
    for m in measurements:
        m.benchmark.resolve(m.raw, machine)
    assert {m.benchmark.name for m in measurements} == {"mem.latency", "mem.bandwidth"}
    points = sum(len(m.raw["bytes"]) for m in measurements)  # a size series per launch
    assert points > 20  # curves, not points


def test_the_table_of_what_it_measures_is_written_once():
    """docs/index.md holds it; the README points there (two copies drift apart)."""
    header = "| area | benchmarks and commands | what you get |"
    assert header in (ROOT / "docs/index.md").read_text()
    assert header not in (ROOT / "README.md").read_text()
    assert "docs/index.md#what-it-measures" in (ROOT / "README.md").read_text()


PACKAGE = ROOT / "src/perfatlas"


def packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def test_every_module_is_in_its_package_s_docstring_map():
    """Each package's docstring says what it owns and lists its modules and sub-packages."""
    missing = []
    for package in packages():
        docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        names = [p.name for p in package.glob("*.py") if p.name != "__init__.py"]
        names += [f"{p.parent.name}/" for p in package.glob("*/__init__.py")]
        missing += [f"{package.name}: {name}" for name in names if name not in docstring]
    assert missing == [], missing


def test_every_module_is_in_the_architecture_map():
    """docs/architecture.md's module map: a block per package of src/perfatlas, naming each of
    its modules."""
    text = (ROOT / "docs/architecture.md").read_text()
    block = text.split("## Modules", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("src/perfatlas/")))
    blocks, current = {}, None
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        head = re.match(r"^  (\w+)/ ", line)
        if head:
            current = head.group(1)
        blocks[current] = blocks.get(current, "") + " " + line
    missing = []
    for package in packages():
        if package == PACKAGE:
            continue
        words = set(re.findall(r"[\w.]+", blocks.get(package.name, "")))
        missing += [
            f"{package.name}/{p.stem}"
            for p in package.glob("*.py")
            if p.name != "__init__.py" and p.stem not in words
        ]
        if package.name not in blocks:
            missing.append(f"{package.name}/")
    assert missing == [], missing
