"""plugman's block in a clone's `.git/info/exclude`, checked against real git: a clone, a
worktree (`.git` is a file), odd file names, the user's own lines kept byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plugman.agents.git_exclude import BEGIN, END, clone_of, rewritten, wanted
from tests.integration.helpers import git


def ignored(root: Path, *paths: str) -> set[str]:
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths],
        cwd=root, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return set(done.stdout.split("\n")) - {""}


def apply(project: Path, generated: list[Path]) -> None:
    change = wanted(project, [str(p) for p in generated])
    if change is not None:
        path, data = change
        path.parent.mkdir(parents=True, exist_ok=True)
        assert data is not None
        path.write_bytes(data)


def test_not_a_clone_gets_nothing(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / ".agents").mkdir(parents=True)
    if clone_of(tmp_path) is None:  # (the temporary folder is in no clone)
        assert wanted(project, [str(project / ".agents")]) is None
    (project / ".git").write_text("not a gitdir line\n")
    assert clone_of(project) is None


def test_block_lists_copies_and_keeps_the_users_lines(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    exclude = repo / ".git" / "info" / "exclude"
    mine = "# my own\n*.log\n"
    exclude.write_text(mine)
    odd = repo / ".agents" / "skills" / "we*ird [1]"
    copies = [repo / ".agents" / "skills" / "forecast", repo / ".codex" / "agents" / "m.toml", odd]
    for copy in copies:
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text("x")
    (repo / ".agents" / "skills" / "weather").write_text("not plugman's")
    outside = tmp_path / "elsewhere" / "skill"
    apply(repo, [*copies, outside])
    text = exclude.read_text()
    assert text.startswith(mine) and BEGIN in text and END in text and "elsewhere" not in text
    listed = ignored(repo, ".agents/skills/forecast", ".codex/agents/m.toml",
                     ".agents/skills/we*ird [1]", ".agents/skills/weather")  # fmt: skip
    odd_name = ".agents/skills/we*ird [1]"
    assert listed == {".agents/skills/forecast", ".codex/agents/m.toml", odd_name}
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert status.split("\n")[:-1] == ["?? .agents/skills/weather"], status
    assert wanted(repo, [str(p) for p in [*copies, outside]]) is None  # nothing to change
    apply(repo, [copies[0]])
    assert ignored(repo, ".codex/agents/m.toml") == set()
    apply(repo, [])
    assert exclude.read_text() == mine  # the block gone, the user's lines as they were


def test_a_worktree_uses_the_common_exclude(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("r")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "r")
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree))
    assert (tree / ".git").is_file()
    found = clone_of(tree / "sub")
    assert found is not None and found.root == tree
    assert found.exclude.resolve() == (repo / ".git" / "info" / "exclude").resolve()
    (tree / ".agents").mkdir()
    (tree / ".agents" / "copy").write_text("x")
    apply(tree, [tree / ".agents" / "copy"])
    assert git(tree, "status", "--porcelain", "--untracked-files=all") == ""


def test_rewritten_without_lines_and_file() -> None:
    assert rewritten(None, []) is None
    assert rewritten("a", ["/x"]) == f"a\n{BEGIN}\n/x\n{END}\n"
    assert rewritten(f"a\n{BEGIN}\n/x\n{END}\nb\n", []) == "a\nb\n"
