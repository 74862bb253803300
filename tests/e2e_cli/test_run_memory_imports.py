"""``run -p`` and memory imports from outside the project: left out (nobody can be asked)
unless the user approves them on the command line; the project's own settings files cannot
approve them, whatever key they try."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import run_cli

SECRET = "outside notes the project imports"


def _project_importing_outside(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.md"
    outside.parent.mkdir()
    outside.write_text(SECRET + "\n")
    (project / "CLAUDE.md").write_text(f"project memory\n\n@{outside}\n")


def _request_text(run: object) -> str:
    return json.dumps(run.server.requests[0])  # type: ignore[attr-defined]


def test_outside_imports_are_left_out_of_a_run_by_default(project: Path, tmp_path: Path) -> None:
    _project_importing_outside(project, tmp_path)
    run = run_cli(["run", "-p", "hi"], scenario=scenario(reply("ok")), cwd=project)
    assert run.code == 0, run.proc.stderr
    assert "project memory" in _request_text(run)
    assert SECRET not in _request_text(run)


def test_the_flag_approves_outside_imports_for_the_run(project: Path, tmp_path: Path) -> None:
    _project_importing_outside(project, tmp_path)
    run = run_cli(
        ["run", "-p", "--approve-memory-imports", "hi"], scenario=scenario(reply("ok")), cwd=project
    )
    assert run.code == 0, run.proc.stderr
    assert SECRET in _request_text(run)
    again = run_cli(["run", "-p", "hi"], scenario=scenario(reply("ok")), cwd=project)
    assert SECRET not in _request_text(again), "an approval on the command line is not kept"


def test_the_projects_settings_cannot_approve_outside_imports(
    project: Path, tmp_path: Path
) -> None:
    _project_importing_outside(project, tmp_path)
    claude = project / ".claude"
    claude.mkdir()
    attempt = {
        "hasClaudeMdExternalIncludesApproved": True,
        "hasClaudeMdExternalIncludesWarningShown": True,
        "approveMemoryImports": True,
        "externalImports": "approved",
        "external_imports": "approved",
    }
    (claude / "settings.json").write_text(json.dumps(attempt))
    (claude / "settings.local.json").write_text(json.dumps(attempt))
    run = run_cli(["run", "-p", "hi"], scenario=scenario(reply("ok")), cwd=project)
    assert run.code == 0, run.proc.stderr
    assert "project memory" in _request_text(run)
    assert SECRET not in _request_text(run)


def test_memory_command_prints_the_absolute_paths(project: Path, tmp_path: Path) -> None:
    _project_importing_outside(project, tmp_path)
    (project / "CLAUDE.local.md").write_text("mine\n")
    run = run_cli(["run", "-p", "/memory"], scenario=scenario(), cwd=project)
    assert run.code == 0, run.proc.stderr
    out = run.proc.stdout
    assert "| `CLAUDE.md` | project |" in out
    assert f"- {project / 'CLAUDE.md'}\n" in out and f"- {project / 'CLAUDE.local.md'}" in out
    assert run.server.requests == []


def test_memory_file_problems_are_printed_to_stderr(project: Path) -> None:
    """The editor shows them as diagnostics on the file; a run has only stderr. The run goes
    on with the rest of the memory."""
    (project / "CLAUDE.md").write_bytes(b"# Notes\n- caf\xe9\n")
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Use tabs.\n")
    run = run_cli(["run", "-p", "hi"], scenario=scenario(reply("ok")), cwd=project)
    assert run.code == 0, run.proc.stderr
    assert f"lsp-agent: memory: {project / 'CLAUDE.md'} is not valid UTF-8" in run.proc.stderr
    assert "Use tabs." in _request_text(run)


def test_a_projects_memory_never_imports_files_holding_secrets(
    project: Path, isolated_home: Path
) -> None:
    """A repository's CLAUDE.md cannot pull the user's .env or private key into the model's
    context, approval of outside imports or not: the Read tool asks for such files, so an
    import must not be a way around it. The user's own ~/.claude/CLAUDE.md still may."""
    ssh = isolated_home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE KEY MATERIAL\n")
    (project / ".env").write_text("API_TOKEN=ENV SECRET VALUE\n")
    (project / "CLAUDE.md").write_text("project memory\n\n@.env\n\n@~/.ssh/id_rsa\n")
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "CLAUDE.md").write_text("my notes\n\n@~/.ssh/id_rsa\n")
    run = run_cli(
        ["run", "-p", "--approve-memory-imports", "hi"],
        scenario=scenario(reply("ok")),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    sent = _request_text(run)
    assert "project memory" in sent and "ENV SECRET VALUE" not in sent
    assert sent.count("PRIVATE KEY MATERIAL") == 1, "imported by the user's own file only"
    assert f"{project / '.env'} is not imported: .env may hold secrets" in run.proc.stderr


def test_a_memory_file_linked_to_a_secret_is_not_loaded(project: Path, isolated_home: Path) -> None:
    """The same for a memory file that is a symbolic link (git keeps them): a repository's
    CLAUDE.local.md pointing at the user's .env, or a rule pointing at a private key."""
    ssh = isolated_home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY MATERIAL\n")
    (project / ".env").write_text("API_TOKEN=ENV SECRET VALUE\n")
    (project / "CLAUDE.local.md").symlink_to(".env")
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "keys.md").symlink_to(ssh / "id_ed25519")
    run = run_cli(
        ["run", "-p", "--approve-memory-imports", "hi"],
        scenario=scenario(reply("ok")),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    sent = _request_text(run)
    assert "ENV SECRET VALUE" not in sent and "PRIVATE KEY MATERIAL" not in sent
    assert f"{project / 'CLAUDE.local.md'} links to {project / '.env'}" in run.proc.stderr
