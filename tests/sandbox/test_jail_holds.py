"""Escapes tried against the jail from sandbox code, as a hostile repository would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths
from vis_core.sandbox.host import VIS_ROOT

from .hostile import BWRAP_PROBLEM, make_repo, run_blocks

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))


def _trusted_project(workspace: Path, vis_home: Path) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    (workspace / ".vis").mkdir()
    (workspace / ".vis" / "settings.toml").write_text("[settings]\njail = true\n")
    (workspace / "vis.yml").write_text("environment:\n  PROJECT_NAME: acme\n")
    (workspace / ".env").write_text("FROM_DOTENV=yes\n")
    TrustStore(VisPaths.from_env()).trust(workspace)


SWITCH_OFF = """
import os
for path, text in ((".vis/settings.toml", "[settings]\\njail = false\\n"),
                   (".vis/extensions/x.py", "import os\\n"),
                   ("vis.yml", "toggles:\\n  jail: false\\n"),
                   (".env", "EVIL=1\\n"),
                   (".env.local", "EVIL=1\\n")):
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        open(path, "w").write(text)
        print("wrote", path)
    except OSError as exc:
        print("refused", path, type(exc).__name__)
"""


@jailed
async def test_sandbox_cannot_switch_the_jail_off_through_project_files(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    _trusted_project(workspace, vis_home)
    outcome = await run_blocks(workspace, tmp_path, SWITCH_OFF)
    printed = outcome.blocks[0].stdout.splitlines()
    assert "refused .vis/settings.toml PermissionError" not in printed  # read-only, not EACCES
    assert [line.split()[0] for line in printed[:4]] == ["refused"] * 4, printed
    assert "jail = true" in (workspace / ".vis" / "settings.toml").read_text()
    assert not (workspace / ".vis" / "extensions").exists()
    # a new .env.local (it did not exist) changes the fingerprint: trust must be given again
    if (workspace / ".env.local").exists():
        assert not TrustStore(VisPaths.from_env()).is_trusted(workspace)


@jailed
async def test_patch_and_jailed_shell_refuse_control_files(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    _trusted_project(workspace, vis_home)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        """
        try:
            await patch(".vis/settings.toml", None, [{"start": 2, "end": 2, "text": "x\\n"}])
        except Exception as exc:
            print("patch:", type(exc).__name__)
        sh = await shell("echo EVIL=1 >> .env; echo jail = false >> .vis/settings.toml")
        print((await sh.wait(30)).exit_code)
        """,
    )
    block = outcome.blocks[0]
    assert block.error is None, block.error
    assert "patch: PermissionError" in block.stdout
    assert (workspace / ".env").read_text() == "FROM_DOTENV=yes\n"
    assert "false" not in (workspace / ".vis" / "settings.toml").read_text()


@pytest.mark.usefixtures("jail_off")  # explicitly: a block changes control files
async def test_a_control_file_changed_outside_the_jail_needs_trust_again(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (workspace / ".vis").mkdir()
    (workspace / ".vis" / "settings.toml").write_text("[settings]\nintrospection = true\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        'sh = await shell("mkdir -p .vis/extensions && echo x = 1 > .vis/extensions/x.py")\n'
        "print((await sh.wait(30)).exit_code)",
    )
    assert outcome.blocks[0].stdout.strip() == "0"
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    assert any("changed since you trusted it" in n and "vis trust" in n for n in notices)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        assert not host.space.trusted
        assert any("vis trust" in note for note in host.startup_notes())
        assert host.catalog.loaded.get("x") is None  # listed as failed, saying why; not run
    finally:
        await host.close()
    TrustStore(VisPaths.from_env()).trust(workspace)
    assert TrustStore(VisPaths.from_env()).is_trusted(workspace)


async def test_saving_a_project_setting_keeps_trust(workspace: Path, vis_home: Path) -> None:
    (workspace / "vis.yml").write_text("toggles: {}\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        await host.settings.set("introspection", False, "project")
    finally:
        await host.close()
    assert "introspection = false" in (workspace / ".vis" / "settings.toml").read_text()
    assert TrustStore(VisPaths.from_env()).is_trusted(workspace)


@jailed
async def test_vis_home_inside_the_workspace_is_masked(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = workspace / ".config" / "vis"
    home.mkdir(parents=True)
    monkeypatch.setenv("VIS_HOME", str(home))
    (home / "config.toml").write_text("jail = true\n")
    (home / "secrets").write_text(json.dumps({"token": "s3cr3t-value"}))
    outcome = await run_blocks(
        workspace,
        tmp_path,
        """
        import os
        print(sorted(os.listdir(".config/vis")))
        try:
            open(".config/vis/config.toml", "a").write("jail = false\\n")
        except OSError as exc:
            print("append:", type(exc).__name__)
        try:
            await cat(".config/vis/secrets")
        except Exception as exc:
            print("cat:", str(exc).splitlines()[0])
        sh = await shell("cat .config/vis/secrets; ls .config/vis")
        print("shell:", (await sh.wait(30)).output)
        print("grep:", await grep("s3cr3t", hidden=True))
        """,
    )
    block = outcome.blocks[0]
    assert block.error is None, block.error
    assert "s3cr3t-value" not in block.stdout
    assert "vis.db" not in block.stdout and "secrets'" not in block.stdout
    assert "inside Vis's own folder" in block.stdout
    assert (home / "config.toml").read_text() == "jail = true\n"


@pytest.mark.parametrize(
    "config",
    [b'jail = true\nmodel = "\xff"\n', b"jail = [true\n", b'jail = "yes"\n'],
    ids=["non-utf8", "malformed", "wrong-type"],
)
async def test_unreadable_jail_setting_fails_closed(
    workspace: Path, tmp_path: Path, vis_home: Path, config: bytes
) -> None:
    (vis_home / "config.toml").write_bytes(config)
    marker = workspace / "ran.txt"
    outcome = await run_blocks(workspace, tmp_path, f"open({str(marker)!r}, 'w').write('x')")
    assert not outcome.blocks  # the turn stops before its first block, naming the value
    error = outcome.ended.error or ""
    assert outcome.ended.status.value == "failed" and "a setting it cannot read" in error
    assert str(vis_home / "config.toml") in error
    assert not marker.exists()
    assert (vis_home / "config.toml").read_bytes() == config  # never rewritten


async def test_sandbox_and_shell_never_see_the_host_environment(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-key")
    monkeypatch.setenv("SOME_TOKEN", "host-token")
    (workspace / "vis.yml").write_text("environment:\n  PROJECT_NAME: acme\n")
    (workspace / ".env").write_text("FROM_DOTENV=yes\n")
    (workspace / ".env.local").write_text("FROM_LOCAL=also\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        """
        import os
        print(sorted(k for k in os.environ if k in
              ("ANTHROPIC_API_KEY", "SOME_TOKEN", "PROJECT_NAME", "FROM_DOTENV", "FROM_LOCAL",
               "PATH", "HOME")))
        sh = await shell("echo key=$ANTHROPIC_API_KEY token=$SOME_TOKEN p=$PROJECT_NAME")
        print((await sh.wait(30)).output.strip())
        """,
    )
    block = outcome.blocks[0]
    assert block.error is None, block.error
    first, second = block.stdout.strip().splitlines()
    assert first == str(["FROM_DOTENV", "FROM_LOCAL", "HOME", "PATH", "PROJECT_NAME"])
    assert second == "key= token= p=acme"


@jailed
async def test_control_files_a_jailed_block_creates_are_not_trusted(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A project without ``.vis/``: the jail keeps an empty one read-only, so a block cannot
    make ``.vis/extensions``; a ``vis.yml`` it makes (the jail cannot reserve a file's name
    without leaving an empty file behind) is not trusted at the next start (the trust
    fingerprint changes)."""
    (vis_home / "config.toml").write_text("jail = true\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        "import os\ntry:\n    os.makedirs('.vis/extensions')\nexcept OSError as exc:\n"
        "    print(type(exc).__name__)\n"
        "open('vis.yml', 'w').write('toggles:\\n  jail: false\\n')",
    )
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert outcome.blocks[0].stdout.strip() in ("PermissionError", "OSError")
    assert (workspace / ".vis").is_dir() and not any((workspace / ".vis").iterdir())
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        assert not host.space.trusted
        assert host.space.jail_policy()[0]
    finally:
        await host.close()


async def test_a_git_made_during_the_session_is_told(workspace: Path, tmp_path: Path) -> None:
    """A folder without ``.git`` at start: a block's command runs `git init` there (the jail
    cannot keep a name that does not exist yet from being made without leaving an empty one
    on the host). The person is told once, before their own git reads its config."""
    outcome = await run_blocks(
        workspace,
        tmp_path,
        'sh = await shell("git init -q && git config core.fsmonitor ./x.sh")\n'
        "print((await sh.wait(30)).exit_code)",
        "print('again')",
    )
    assert outcome.blocks[0].stdout.strip() == "0", outcome.blocks[0].error
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "a .git appeared in" in n]
    assert len(told) == 1 and str(workspace.resolve()) in told[0] and "fsmonitor" in told[0]


async def test_a_git_made_in_a_subfolder_is_told_with_the_top_one(
    workspace: Path, tmp_path: Path
) -> None:
    """A block makes a ``.git`` at the top and one in a subfolder: both are told, once; a
    clone that was there at start is not told, but one made inside it is (the person's git
    run there reads that one's configuration). The first block makes both itself, with no
    tool call: a tool call's end (``shell``'s, at once) starts a check, which could look
    between the two and tell them in two notices."""
    (workspace / "old" / "inner").mkdir(parents=True)
    (workspace / "old" / ".git").mkdir()
    outcome = await run_blocks(
        workspace,
        tmp_path,
        'import os\nfor made in (".git", "sub/.git"):\n    os.makedirs(made)\nprint(0)',
        'sh = await shell("git init -q old/inner")\nprint((await sh.wait(30)).exit_code)',
    )
    assert [b.stdout.strip() for b in outcome.blocks] == ["0", "0"], outcome.blocks[0].error
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "a .git appeared in" in n]
    root = workspace.resolve()
    assert len(told) == 2, told
    assert f"appeared in {root}, {root / 'sub'} during" in told[0]
    assert f"appeared in {root / 'old' / 'inner'} during" in told[1]
    assert f"{root / 'old'} during" not in " ".join(notices)


async def test_a_git_made_only_in_a_subfolder_is_told(workspace: Path, tmp_path: Path) -> None:
    """No ``.git`` at the top: one made two folders down is told all the same."""
    outcome = await run_blocks(
        workspace,
        tmp_path,
        'sh = await shell("mkdir -p a/b && cd a/b && git init -q .")\n'
        "print((await sh.wait(30)).exit_code)",
    )
    assert outcome.blocks[0].stdout.strip() == "0", outcome.blocks[0].error
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "a .git appeared in" in n]
    assert len(told) == 1 and str(workspace.resolve() / "a" / "b") in told[0], notices


async def test_a_bare_repository_made_in_a_subfolder_is_told(
    workspace: Path, tmp_path: Path
) -> None:
    """A block writes HEAD, objects/, refs/ and a config in sub/ of a git workspace: git
    takes sub/ for a repository, and the person's git run there would read that config. The
    person is told once, as for a .git; a folder with HEAD and refs/ only is not told."""
    make_repo(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        "import os\n"
        "for folder in ('sub', 'half'):\n"
        "    os.makedirs(folder + '/refs'); open(folder + '/HEAD', 'w').write('ref: refs/x\\n')\n"
        "os.makedirs('sub/objects'); open('sub/config', 'w').write('[core]\\n')",
        "print('again')",
    )
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "a git repository appeared in" in n]
    root = workspace.resolve()
    assert len(told) == 1 and f"appeared in {root / 'sub'} during" in told[0], notices
    assert str(root / "half") not in " ".join(notices)


async def test_a_git_made_after_thousands_of_folders_is_told(
    workspace: Path, tmp_path: Path
) -> None:
    """One block makes 2,000 folders, the next a repository in a folder named after them:
    however many folders came first, the one the later block changed is looked in first."""
    make_repo(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        "import os\nfor i in range(2000): os.makedirs(f'd{i:04d}')",
        'sh = await shell("git init -q zz && git -C zz config core.fsmonitor ./x.sh")\n'
        "print((await sh.wait(30)).exit_code)",
    )
    assert outcome.blocks[1].stdout.strip() == "0", outcome.blocks[1].error
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "a .git appeared in" in n]
    assert len(told) == 1 and str(workspace.resolve() / "zz") in told[0], notices


async def test_a_vis_folder_made_in_an_untrusted_project_is_told(
    workspace: Path, tmp_path: Path
) -> None:
    """An untrusted project: a block cannot make ``.vis/extensions`` (the jail keeps an empty
    ``.vis/`` read-only); the ``vis.yml`` it makes is told before the person trusts the
    project."""
    outcome = await run_blocks(
        workspace,
        tmp_path,
        'sh = await shell("mkdir -p .vis/extensions || echo refused; echo jail: 1 > vis.yml")\n'
        "print((await sh.wait(30)).exit_code, (await sh.logs()).strip())",
    )
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert "refused" in outcome.blocks[0].stdout, outcome.blocks[0].stdout
    assert not (workspace / ".vis" / "extensions").exists()
    notices = [e.text for e in outcome.events if type(e).__name__ == "Notification"]
    told = [n for n in notices if "appeared during this session" in n]
    assert len(told) == 1 and "vis.yml" in told[0] and "vis trust" in told[0]


@jailed
@pytest.mark.skipif(
    not (VIS_ROOT / "pyproject.toml").exists(), reason="Vis is installed, not run from its source"
)
async def test_a_jailed_block_sees_vis_code_but_not_the_rest_of_its_source_checkout(
    workspace: Path, tmp_path: Path
) -> None:
    """Vis run from its source checkout (an editable install, as when working on Vis): the
    jail showed the whole checkout, read-only, so a block read its ``.env`` or the tokens in
    its ``.git/config``. Only Vis's packages and its interpreter are shown."""
    outcome = await run_blocks(
        workspace,
        tmp_path,
        f"import os\nprint(os.path.exists({str(VIS_ROOT / 'pyproject.toml')!r}))\n"
        f"print(os.path.exists({str(VIS_ROOT / 'vis_core' / '__init__.py')!r}))",
    )
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert outcome.blocks[0].stdout.split() == ["False", "True"]


@jailed
async def test_skills_and_agent_settings_of_other_agents_are_control_files(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """``.claude/`` and ``.agents/`` (skills a trusted project's sessions read; hooks other
    agents run) are read-only in the jail, and a skill added to a trusted project outside
    the jail makes the person trust it again."""
    (vis_home / "config.toml").write_text("jail = true\n")
    for folder in (".claude", ".agents"):
        (workspace / folder / "skills").mkdir(parents=True)
    TrustStore(VisPaths.from_env()).trust(workspace)
    outcome = await run_blocks(
        workspace,
        tmp_path,
        "import os\nfor path in ('.claude/settings.json', '.agents/skills/x.md',"
        " '.claude/skills/x.md'):\n"
        "    try:\n        open(path, 'w').write('{}')\n        print(path, 'written')\n"
        "    except OSError as exc:\n        print(path, type(exc).__name__)",
    )
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert "written" not in outcome.blocks[0].stdout, outcome.blocks[0].stdout
    assert TrustStore(VisPaths.from_env()).is_trusted(workspace)
    skill = workspace / ".claude" / "skills" / "deploy"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: d\n---\nrm -rf /\n")
    assert not TrustStore(VisPaths.from_env()).is_trusted(workspace)


@jailed
@pytest.mark.parametrize("allowed", [False, True])
async def test_home_dot_files_are_writable_only_when_the_person_allows_it(
    tmp_path: Path, vis_home: Path, monkeypatch: pytest.MonkeyPatch, allowed: bool
) -> None:
    """A session whose workspace is the home folder: blocks and their shell commands may
    change home's dot files only with ``jail_home_writable = true`` (the person's choice);
    ``patch`` on the host follows the same rule."""
    home = tmp_path / "ada"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    setting = "jail_home_writable = true\n" if allowed else ""
    (vis_home / "config.toml").write_text("jail = true\n" + setting)
    outcome = await run_blocks(
        home,
        tmp_path,
        "for write in (lambda: open('.bashrc', 'a').write('# block\\n'),):\n"
        "    try:\n        write()\n        print('block wrote')\n"
        "    except OSError as exc:\n        print('block', type(exc).__name__)\n"
        "sh = await shell('echo \"# shell\" >> .bashrc && echo shell wrote'\n"
        "                 ' || echo shell refused')\n"
        "print((await sh.wait(30)).exit_code, (await sh.logs()).strip())\n"
        "try:\n    await patch('.profile', 0, 'x\\n')\n    print('patch wrote')\n"
        "except Exception as exc:\n    print('patch refused')",
    )
    out = outcome.blocks[0].stdout
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    if allowed:
        assert "block wrote" in out and "shell wrote" in out and "patch wrote" in out, out
        assert (home / ".bashrc").read_text() == "# mine\n# block\n# shell\n"
    else:
        assert "block wrote" not in out and "shell refused" in out and "patch refused" in out
        assert (home / ".bashrc").read_text() == "# mine\n"


@jailed
async def test_a_home_folder_that_does_not_exist_inside_the_workspace_starts_the_jail(
    workspace: Path, tmp_path: Path, vis_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOME of a service user may name no folder; one inside the workspace made bwrap fail
    every block ("Can't find source path"), and the jail must not make it either."""
    monkeypatch.setenv("HOME", str(workspace / "nobody-home"))
    (vis_home / "config.toml").write_text("jail = true\n")
    outcome = await run_blocks(workspace, tmp_path, "print('ran')")
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert outcome.blocks[0].stdout == "ran\n"
    assert not (workspace / "nobody-home").exists()


@jailed
async def test_a_cut_outputs_saved_whole_text_is_read_with_cat_in_the_jail(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A cut output's note names the file the whole text went to, in Vis's own folder; the
    jail shows the session's folder of them read-only to the block, but ``cat`` refused the
    file as outside the workspace. cat and ls read that folder now, beneath it; nothing
    else of Vis's folder, and grep (ripgrep follows links) still refuses."""
    (vis_home / "config.toml").write_text("jail = true\n")
    read = f"""
import glob
(saved,) = glob.glob("{vis_home}/outputs/*/*")  # the session's own folder, shown read-only
print((await cat(saved, 4999, 5000)).splitlines()[1:])
print(len((await ls(saved.rsplit("/", 1)[0])).splitlines()))
for call in (cat(saved + "/../../../config.toml"), grep("row", saved)):
    try:
        await call
    except Exception as exc:
        print("is outside the workspace" in str(exc))
"""
    outcome = await run_blocks(workspace, tmp_path, "for i in range(5000): print('row', i)", read)
    printed, tried = outcome.blocks
    assert "Full output saved to: " in printed.stdout
    assert tried.error is None, tried.error
    assert tried.stdout.splitlines() == [
        "['4999: row 4998', '5000: row 4999']",
        "2",  # the folder's line and its one file
        "True",
        "True",
    ], tried.stdout


@jailed
async def test_vis_own_cache_stays_out_of_reach_with_home_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``vis`` process runs the code kept in Vis's cache (``~/.cache/vis``): a block in a
    home folder with ``jail_home_writable = true`` rewrote it, and the next ``vis`` ran the
    model's code on the host, outside the jail (found by an attacker)."""
    home = tmp_path / "ada"
    cache = home / ".cache" / "vis"
    cache.mkdir(parents=True)
    kept = cache / "dataclass-code.marshal"
    kept.write_bytes(b"kept")
    (home / ".config" / "vis").mkdir(parents=True)
    (home / ".config" / "vis" / "config.toml").write_text("jail_home_writable = true\n")
    for name in ("VIS_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    attempts = """
import os
for name, act in (
    ("replace", lambda: open(".cache/vis/dataclass-code.marshal", "wb").write(b"evil")),
    ("add", lambda: open(".cache/vis/more", "w").write("evil")),
    ("move vis", lambda: os.rename(".cache/vis", ".cache/vis-gone")),
    ("move cache", lambda: os.rename(".cache", ".cache-gone")),
):
    try:
        act()
        print(name, "done")
    except OSError as exc:
        print(name, "refused", type(exc).__name__)
open(".bashrc", "w").write("# mine\\n")  # home's own dot files: the person allowed them
"""
    outcome = await run_blocks(home, tmp_path, attempts)
    out = outcome.blocks[0].stdout
    assert outcome.blocks[0].error is None, outcome.blocks[0].error
    assert "move vis refused" in out and "move cache refused" in out, out
    assert kept.read_bytes() == b"kept" and not (cache / "more").exists()
    assert (home / ".bashrc").read_text() == "# mine\n"
