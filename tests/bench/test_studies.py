"""Studies as a registry (:mod:`llmopt.bench.studies`, ``llmopt study list|run``).

Breakages caught (by hand, see the lead's report): a study registered twice without an error; the
manifest not written, or written without the command; ``--seeds 0-49`` written as ``0,1,…`` but read
back as something else; an unknown option passed to a study instead of refused; a study module that
loses its ``run``; a plug-in study not read from its entry-point group.
"""

from __future__ import annotations

import inspect
import json
import shlex
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from llmopt.bench.studies import (
    MANIFEST_FILE,
    STUDIES,
    Study,
    get_study,
    parse_options,
    parse_seeds,
    read_manifest,
    run_study,
    write_manifest,
)
from llmopt.cli.main import app
from llmopt.model.registry import Registry, RegistryError
from llmopt.opt.studies import StudyError, options_argv, study_command

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

#: A study the tests register: it writes one file per seed (or one file) and records its options.
FIXTURE = "h7-fixture-study"


def _fixture_module() -> types.ModuleType:
    mod = types.ModuleType("_study_fixture_module")

    def run(out: Path, *, seeds: Any = None, quick: bool = False, **options: Any) -> list[str]:
        if options.get("fail"):
            raise StudyError("asked to fail")
        out.mkdir(parents=True, exist_ok=True)
        files = []
        for s in seeds if seeds is not None else [0]:
            path = out / f"seed{s}.txt"
            path.write_text(json.dumps({"quick": quick, "options": options}), encoding="utf-8")
            files.append(str(path))
        return files

    def report(out: Path) -> list[str]:
        return sorted(str(p) for p in out.glob("seed*.txt"))

    mod.run = run  # type: ignore[attr-defined]
    mod.report = report  # type: ignore[attr-defined]
    mod.OPTIONS = {"size": "a number", "names": "a list", "flag": "a switch", "fail": "raise a StudyError"}  # type: ignore[attr-defined]
    return mod


@pytest.fixture
def fixture_study(monkeypatch):
    monkeypatch.setitem(sys.modules, "_study_fixture_module", _fixture_module())
    STUDIES.register(FIXTURE, Study(FIXTURE, "opt", "a test study", "_study_fixture_module", "fixture"), doc="test")
    yield get_study(FIXTURE)
    STUDIES.unregister(FIXTURE)


# --- the registry ---------------------------------------------------------------------------------


def test_every_registered_study_is_a_module_in_its_wing_with_run_report_and_a_results_folder():
    names = STUDIES.names()
    assert {"chen-c-like", "chen-theorem-claims", "wang-claims", "zone-bound", "energy-bound"} <= set(names)
    for name in names:
        study = get_study(name)
        assert study.name == name
        wing = "llmopt.opt.studies." if study.paper == "opt" else f"llmopt.papers.{study.paper}.studies."
        assert study.module.startswith(wing), (name, study.module)
        mod = study.load()
        params = inspect.signature(mod.run).parameters
        assert list(params)[:1] == ["out"] and {"seeds", "quick"} <= set(params), name
        assert params["seeds"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert callable(mod.report) and isinstance(mod.OPTIONS, dict), name
        assert (ROOT / "results" / study.results).is_dir(), f"{name}: results/{study.results} is missing"


def test_lookup_of_an_unknown_study_names_the_known_ones():
    with pytest.raises(RegistryError, match="unknown study 'no-such-study'.*chen-c-like"):
        get_study("no-such-study")


def test_a_duplicate_study_name_is_refused(fixture_study):
    with pytest.raises(RegistryError, match="already registered"):
        STUDIES.register(FIXTURE, Study(FIXTURE, "opt", "again", "_study_fixture_module", "fixture"))
    assert get_study(FIXTURE) is fixture_study


def test_a_study_registered_under_another_name_is_refused(monkeypatch):
    reg: Registry[Study] = Registry("study", "llmopt.studies-test")
    monkeypatch.setattr("llmopt.bench.studies.STUDIES", reg)
    reg.register("alias", Study("real-name", "opt", "", "x", "y"))
    with pytest.raises(RegistryError, match="calls itself 'real-name'"):
        get_study("alias")


def test_a_plug_in_study_is_read_from_the_entry_point_group(tmp_path):
    """A third-party package declares ``[project.entry-points."llmopt.studies"]``; with it on the path,
    ``llmopt study list`` names its study and ``llmopt study run`` runs it and writes the manifest."""
    (tmp_path / "plugstudy.py").write_text(
        "from pathlib import Path\n"
        "from llmopt.bench.studies import Study\n"
        "STUDY = Study('plug-study', 'opt', 'a plug-in study', 'plugstudy', 'plug')\n"
        "OPTIONS = {}\n"
        "def run(out, *, seeds=None, quick=False, **options):\n"
        "    (Path(out) / 'plug.txt').write_text('ok')\n"
        "    return [str(Path(out) / 'plug.txt')]\n"
        "def report(out):\n"
        "    return [str(Path(out) / 'plug.txt')]\n", encoding="utf-8")
    dist = tmp_path / "plugstudy-0.0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugstudy\nVersion: 0.0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[llmopt.studies]\nplug-study = plugstudy:STUDY\n", encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path), "COLUMNS": "250", "PATH": "/usr/bin:/bin"}
    code = "import sys; from llmopt.cli.main import app; app(sys.argv[1:])"
    listed = subprocess.run([sys.executable, "-c", code, "study", "list"], capture_output=True, text=True, env=env,
                            cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "plug-study" in listed.stdout and "a plug-in study" in listed.stdout
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", code, "study", "run", "plug-study", "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "plug.txt").read_text() == "ok"
    assert read_manifest(out)["plug-study"]["files"] == ["plug.txt"]


# --- arguments and the command line ---------------------------------------------------------------


@pytest.mark.parametrize("text,seeds", [("0-49", tuple(range(50))), ("0,2,5", (0, 2, 5)), ("3", (3,)),
                                        ("0-2,7", (0, 1, 2, 7))])
def test_seeds_parse(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["a", "5-2", "1,1", "0-"])
def test_bad_seeds_are_refused(text):
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds(text)


def test_a_command_line_reads_back_to_its_arguments():
    options = {"sizes": [1000, 10000], "budget": 20, "rate": 0.5, "stages": ["energy", "lp-colgen"], "fresh": True,
               "only": "thm62", "grid": "full"}
    seeds = (0, 1, 2, 3, 4)
    argv = shlex.split(study_command("trace-bracket", "results/x y", quick=True, seeds=seeds, options=options))
    assert argv[:4] == ["llmopt", "study", "run", "trace-bracket"]
    assert argv[argv.index("--out") + 1] == "results/x y"
    assert "--quick" in argv
    assert parse_seeds(argv[argv.index("--seeds") + 1]) == seeds
    rest = argv[argv.index("--seeds") + 2:]
    assert parse_options(rest) == options
    assert options_argv(options) == rest


def test_options_parse_lists_flags_and_equals():
    assert parse_options(["--a", "1", "2", "--b", "--c=x", "--d", "-3"]) == {"a": [1, 2], "b": True, "c": "x",
                                                                         "d": -3}
    with pytest.raises(ValueError, match="given twice"):
        parse_options(["--a", "1", "--a", "2"])
    with pytest.raises(ValueError, match="study option"):
        parse_options(["stray"])


# --- running and the manifest ---------------------------------------------------------------------


def test_run_study_writes_files_and_a_manifest_entry(fixture_study, tmp_path):
    out = tmp_path / "o"
    files = run_study(FIXTURE, out, seeds=[1, 2], size=3, names=["a", "b"])
    assert files == [str(out / "seed1.txt"), str(out / "seed2.txt"), str(out / MANIFEST_FILE)]
    entry = read_manifest(out)[FIXTURE]
    assert entry["arguments"] == {"out": str(out), "quick": False, "seeds": [1, 2],
                                  "options": {"size": 3, "names": ["a", "b"]}}
    assert entry["command"] == study_command(FIXTURE, out, seeds=[1, 2], options={"size": 3, "names": ["a", "b"]})
    assert entry["files"] == ["seed1.txt", "seed2.txt"] and entry["regenerated"] is True
    assert entry["version"] and entry["date"].endswith("+00:00")
    assert entry["commit"] is None or len(entry["commit"]) == 40


def test_run_study_defaults_to_runs_name(fixture_study, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import llmopt.api

    llmopt.api.run_study(FIXTURE, quick=True)
    assert (tmp_path / "runs" / FIXTURE / "seed0.txt").exists()
    assert read_manifest(tmp_path / "runs" / FIXTURE)[FIXTURE]["arguments"]["quick"] is True
    assert not (tmp_path / "results").exists()


def test_an_unknown_option_is_refused_before_anything_runs(fixture_study, tmp_path):
    with pytest.raises(ValueError, match="has no option --colour .*--fail, --flag, --names, --size"):
        run_study(FIXTURE, tmp_path / "o", colour="red")
    assert not (tmp_path / "o" / "seed0.txt").exists()


def test_a_manifest_keeps_the_other_studies_of_its_folder(fixture_study, tmp_path):
    other = get_study("certified-gap")
    write_manifest(tmp_path, other, regenerated=False, command_out="results/jaillet/certified")
    run_study(FIXTURE, tmp_path)
    manifest = read_manifest(tmp_path)
    assert set(manifest) == {"certified-gap", FIXTURE}
    assert manifest["certified-gap"]["command"] == "llmopt study run certified-gap --out results/jaillet/certified"
    assert manifest["certified-gap"]["regenerated"] is False


# --- the CLI --------------------------------------------------------------------------------------


def test_study_list_names_every_registered_study(fixture_study):
    res = runner.invoke(app, ["--no-plugins", "study", "list"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    for name in STUDIES.names():
        assert name in res.stdout, name
        assert f"results/{get_study(name).results}" in res.stdout, name


def test_study_run_quick_writes_the_manifest_and_its_command_reruns(tmp_path):
    """``certified-gap`` (it reloads two committed runs and solves nothing: seconds): ``llmopt study run
    certified-gap --quick --out DIR`` writes ``gap.md``, ``gap_hist.png`` and the manifest; the manifest's
    command, run again, gives the same arguments."""
    out = tmp_path / "cg"
    res = runner.invoke(app, ["--no-plugins", "study", "run", "certified-gap", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "gap.md").read_text(encoding="utf-8").startswith("# Certified gap per trial")
    assert (out / "gap_hist.png").stat().st_size > 0
    first = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))["certified-gap"]
    assert first["files"] == ["gap.md", "gap_hist.png"]
    argv = shlex.split(first["command"])
    assert argv[0] == "llmopt"
    again = runner.invoke(app, ["--no-plugins", *argv[1:]])
    assert again.exit_code == 0, again.output
    second = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))["certified-gap"]
    assert second["arguments"] == first["arguments"] == {"out": str(out), "quick": True, "seeds": None,
                                                         "options": {}}


def test_study_run_passes_options_and_seeds_through(fixture_study, tmp_path):
    out = tmp_path / "o"
    res = runner.invoke(app, ["--no-plugins", "study", "run", FIXTURE, "--out", str(out), "--seeds", "0-2",
                              "--size", "7", "--names", "a", "b", "--flag"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.glob("seed*.txt")) == ["seed0.txt", "seed1.txt", "seed2.txt"]
    assert json.loads((out / "seed1.txt").read_text())["options"] == {"size": 7, "names": ["a", "b"], "flag": True}
    cmd = read_manifest(out)[FIXTURE]["command"]
    assert cmd == f"llmopt study run {FIXTURE} --out {out} --seeds 0-2 --size 7 --names a b --flag"


@pytest.mark.parametrize("args,message", [
    (["no-such-study"], "unknown study 'no-such-study'"),
    ([FIXTURE, "--colour", "red"], "has no option --colour"),
    ([FIXTURE, "--seeds", "3-1"], "--seeds '3-1'"),
    ([FIXTURE, "--fail"], "asked to fail"),
    ([FIXTURE, "stray"], "a study option is --name"),
])
def test_study_run_bad_input_is_one_line_and_exit_2(fixture_study, tmp_path, args, message):
    res = runner.invoke(app, ["--no-plugins", "study", "run", *args, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], res.stderr
    assert "Traceback" not in res.output


def _command_arguments(command: str) -> tuple[str, dict[str, Any]]:
    """``llmopt study run NAME --out D [--quick] [--seeds S] [--opt v ...]`` read back as the CLI reads it."""
    argv = shlex.split(command)
    assert argv[:3] == ["llmopt", "study", "run"], command
    name, rest = argv[3], argv[4:]
    args: dict[str, Any] = {"out": None, "quick": False, "seeds": None}
    extra = []
    i = 0
    while i < len(rest):
        if rest[i] == "--out":
            args["out"], i = rest[i + 1], i + 2
        elif rest[i] == "--quick":
            args["quick"], i = True, i + 1
        elif rest[i] == "--seeds":
            args["seeds"], i = list(parse_seeds(rest[i + 1])), i + 2
        else:
            extra.append(rest[i])
            i += 1
    args["options"] = parse_options(extra)
    return name, args


def test_every_committed_manifest_names_a_study_and_its_command_reads_back():
    """Each study entry of a ``results/*/*/manifest.json`` is a registered study whose results folder it is
    in, and its command reads back to its arguments with options the study takes (so the command
    regenerates it). Entries of another ``kind`` (a suite's run, a benchmark) are checked in
    ``tests/test_results_layout.py``."""
    from llmopt.bench.studies import check_options

    found = 0
    for path in sorted((ROOT / "results").rglob(MANIFEST_FILE)):
        folder = path.parent.relative_to(ROOT / "results").as_posix()
        for name, entry in json.loads(path.read_text(encoding="utf-8")).items():
            if entry.get("kind", "study") != "study":
                continue
            study = get_study(name)
            assert study.results == folder, (name, folder)
            got_name, args = _command_arguments(entry["command"])
            assert got_name == name and args == entry["arguments"], (path, name)
            assert args["out"] == f"results/{folder}"
            check_options(study, args["options"])
            assert all((path.parent / f).exists() for f in entry["files"]), (path, name)
            found += 1
    assert found >= len(STUDIES.names())


def test_study_report_rerenders_from_the_folder(fixture_study, tmp_path):
    out = tmp_path / "o"
    run_study(FIXTURE, out, seeds=[4])
    res = runner.invoke(app, ["--no-plugins", "study", "report", FIXTURE, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stdout.split() == ["report", str(out / "seed4.txt")]
    missing = runner.invoke(app, ["--no-plugins", "study", "report", FIXTURE, "--out", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "no such folder" in missing.stderr
