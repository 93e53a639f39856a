"""The docs stand alone and match the code: links resolve, and docs/architecture.md names
every module there is and none that is not."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "browserd"
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "CHANGELOG.md"])
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, markup and punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        slug = _slug(line.lstrip("#"))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_never_point_outside_the_project(doc: Path) -> None:
    text = doc.read_text()
    for outside in ("../shared", "/work/", "/tmp/bash_jobs"):
        assert outside not in text, f"{doc.name} mentions {outside!r}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(doc: Path) -> None:
    broken = []
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in _anchors(path)):
            broken.append(target)
    assert not broken, f"{doc.name}: broken links {broken}"


def _tree_sections() -> dict[str, str]:
    """The source-tree drawing of docs/architecture.md: package name → its lines; "" → the
    top-level lines."""
    block = ARCHITECTURE.read_text().split("## The source tree", 1)[1].split("```")[1]
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in block.splitlines():
        match = re.match(r"  ([a-z_]+)/\s", line + " ")
        if match:
            current = match.group(1)
            sections.setdefault(current, [])
        elif re.match(r"  [a-z_]+\.py", line):
            current = ""
        sections[current].append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".py", ".js")
                  and p.name not in ("__init__.py", "__main__.py")
                  and "__pycache__" not in p.parts and "static" not in p.parts)


def test_the_source_tree_drawing_names_every_module() -> None:
    sections = _tree_sections()
    missing = []
    for path in _modules():
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1:
            found = re.search(rf"\b{re.escape(rel.name)}\b", sections[""])
        else:
            found = rel.parts[0] in sections and re.search(
                rf"\b{re.escape(rel.stem if rel.suffix == '.py' else rel.name)}\b",
                sections[rel.parts[0]])
        if not found:
            missing.append(str(rel))
    assert not missing, f"docs/architecture.md's source tree does not name: {missing}"


def test_the_source_tree_drawing_names_no_package_that_is_not_there() -> None:
    gone = [name for name in _tree_sections() if name and not (SRC / name).is_dir()]
    assert not gone, f"docs/architecture.md draws packages that do not exist: {gone}"


def test_every_module_path_architecture_md_names_exists() -> None:
    """Backticked paths (``tabs/actor.py``, ``state/``); in a list like ``tabs/routing.py``,
    ``geometry.py`` the later bare names are in the first one's package."""
    missing = []
    for cell in re.findall(r"(`[^`]+`(?:, `[^`]+`)*)", ARCHITECTURE.read_text()):
        package = ""
        for name in re.findall(r"`([^`]+)`", cell):
            if not re.fullmatch(r"(?:[a-z_]+/)*[a-z_]+(?:\.py|\.js|/)", name):
                continue
            if "/" in name.rstrip("/"):
                package = name.rsplit("/", 1)[0] if not name.endswith("/") else ""
            elif package and not name.endswith("/"):
                name = f"{package}/{name}"
            if not ((SRC / name).exists() or (ROOT / name).exists()):
                missing.append(name)
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
