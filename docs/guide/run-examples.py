#!/usr/bin/env python3
"""Runs every example of README.md and of the user guide (docs/guide/src/**/*.md)
and fails when one fails or prints something else than the page says.

    docs/guide/run-examples.py [--bin-dir DIR] [--python PYTHON] [--prefix PREFIX]
                               [--keep] [FILE.md ...]

--bin-dir (or HETBAL_BIN_DIR): where the built `hetbal` and `hetbal-mpi` are
(default: target/debug); --python (or HETBAL_PYTHON): the interpreter that has
the `hetbal` package (default: .venv-test/bin/python, made by
crates/hetbal-py/tests/run.sh); --prefix (or HETBAL_PREFIX): where
crates/hetbal-c/install.sh installed the C library. Without a file, every page.
Python 3 standard library only.

The conventions of the pages, what each kind of fenced block means:

```console     Commands and their output. A line `$ COMMAND` is a command (a line
              ending in `\\` goes on with the next one); the lines after it, up to
              the next command, are what it prints on its standard output,
              compared line by line, exactly. A line `...` alone matches any
              number of lines (timings, paths); nothing else is fuzzy (blank
              lines at the end of an output are not compared). Standard
              error is not compared (it is shown when the command fails). Each
              command runs in bash with `set -e`: it must exit with status 0 (show
              an expected failure with `|| echo "exit status $?"`).
<!-- example: file=NAME -->  just above a block (any language; blank lines
              between allowed): the block's text is written to NAME in the
              page's directory, for the commands after it. (An HTML comment:
              neither mdBook nor rustdoc shows it, and rustdoc would warn about
              `=` in a code block's info string.)
```python     A Python program, run with --python in the page's directory. When
              the next block (blank lines only between) is ```output, the
              program's standard output must be that block, as for a command.
```c, ```fortran  A whole program: compiled with mpicc / mpif90 against the
              installed library (pkg-config hetbal, hetbal-fortran) and run;
              ```output after it as for Python. `<!-- example: mpirun=N -->`
              above it runs it (and a Python program) under `mpirun -np N`.
```rust       Not run here: the pages with Rust blocks are doctests of a crate
              (`#[cfg(doctest)]` includes in crates/hetbal/src/lib.rs or
              crates/hetbal-mpi/src/lib.rs), run by `cargo test --doc`; this
              runner checks that every such page is included. `rust,ignore`
              blocks may only show code from files ({{#include}}).
```text, ```sh, ```toml, ...  Shown, not run (file layouts, synopses, installs
              that test.sh itself runs).

A block holding only mdBook {{#include FILE}} or {{#include FILE:ANCHOR}} lines
shows code from a file: the runner checks that the file and the anchor exist,
and that a command of the same page runs or compiles that file (files of
crates/*/src are compiled into the binaries the pages run). Every block must
name its language: an untagged block would be a Rust doctest.

Each page runs in a fresh temporary directory that looks like the top of a
clone: the repository's top-level folders are linked there (read-only use), so
`examples/c/jacobi.c` and `crates/...` resolve, and `figures` is a link to
docs/guide/src/figures/, where the pages' commands write the plots the book
shows (`![...](figures/NAME)`). The folder is emptied first, and every figure a
page shows must have been written by a command during the run. PATH starts
with --bin-dir and the directory of --python (so `python` is that
interpreter); PKG_CONFIG_PATH points at the prefix. Exported variables and the
working directory carry over from one command to the next within a page.

At the end: the number of examples of each kind, then
`guide-examples: N passed, M failed` (commands and programs; a failed check of
an include, a figure or a page counts as failed too); exit status 1 when one
failed.
"""

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE_SRC = ROOT / "docs" / "guide" / "src"
FIGURES = GUIDE_SRC / "figures"
DOCTEST_HOSTS = [ROOT / "crates" / "hetbal" / "src" / "lib.rs",
                 ROOT / "crates" / "hetbal-mpi" / "src" / "lib.rs"]
TIMEOUT = 900  # seconds, per command or program

FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
INCLUDE = re.compile(r"\{\{#(include|rustdoc_include)\s+([^}\s]+)\s*\}\}")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
DIRECTIVE = re.compile(r"<!--\s*example:\s*(.*?)\s*-->")


class Block:
    """A fenced block: its info string's words, its text lines, where it starts."""

    def __init__(self, info, lines, line):
        self.words = info.replace(",", " ").split()
        self.lang = self.words[0] if self.words else ""
        self.lines = lines
        self.line = line  # 1-based line of the opening fence

    def attribute(self, name):
        for word in self.words[1:]:
            if word.startswith(name + "="):
                return word[len(name) + 1:]
        return None


def blocks_of(text):
    """The fenced blocks of a markdown text, and whether each is followed by
    another one with only blank lines between."""
    found, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if not m or lines[i].startswith("    "):
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2).strip(), i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i])
            i += 1
        found.append((Block(info, body, start + 1), start, i))
        i += 1
    for block, start, _ in found:
        # A directive in an HTML comment just above the block (blank lines
        # between allowed), which mdBook and rustdoc do not show.
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        m = DIRECTIVE.fullmatch(lines[k].strip()) if k >= 0 else None
        if m:
            block.words += m.group(1).split()
    result = []
    for k, (block, start, end) in enumerate(found):
        follower = None
        if k + 1 < len(found):
            between = lines[end + 1:found[k + 1][1]]
            if all(not line.strip() for line in between):
                follower = found[k + 1][0]
        result.append((block, follower))
    return result


def parse_console(block):
    """(command, expected lines, line number) of a console block."""
    commands, current = [], None
    lines = block.lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ ") or line == "$":
            command = line[2:]
            number = block.line + 1 + i
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command += "\n" + lines[i]
            current = (command, [], number)
            commands.append(current)
        elif current is None:
            if line.strip():
                raise ValueError(f"line {block.line + 1 + i}: output before any `$ ` command")
        else:
            current[1].append(line)
        i += 1
    # Trailing blank lines of an output are not part of it.
    return [(c, strip_trailing_blanks(out), n) for c, out, n in commands]


def strip_trailing_blanks(lines):
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def matches(expected, got):
    """Whether the lines `got` match `expected`, where a line `...` matches any
    number of lines (zero included)."""
    memo = {}

    def at(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            result = j == len(got)
        elif expected[i] == "...":
            result = any(at(i + 1, k) for k in range(j, len(got) + 1))
        else:
            result = j < len(got) and expected[i] == got[j] and at(i + 1, j + 1)
        memo[key] = result
        return result

    sys.setrecursionlimit(max(10000, 4 * (len(expected) + len(got)) + 100))
    return at(0, 0)


class Page:
    """Runs one page's examples in its own temporary directory."""

    def __init__(self, runner, path):
        self.runner, self.path = runner, path
        self.rel = path.relative_to(ROOT)
        self.work = Path(tempfile.mkdtemp(prefix="hetbal-guide-"))
        for entry in ROOT.iterdir():
            if entry.name in ("target", ".git") or entry.name.startswith(".venv"):
                continue
            (self.work / entry.name).symlink_to(entry)
        (self.work / "figures").symlink_to(FIGURES)
        self.state = Path(tempfile.mkdtemp(prefix="hetbal-guide-state-"))
        (self.state / "cwd").write_text(str(self.work))
        (self.state / "env.sh").write_text("")
        self.programs = 0

    def close(self):
        if not self.runner.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        shutil.rmtree(self.state, ignore_errors=True)

    def cwd(self):
        return Path((self.state / "cwd").read_text().strip())

    def shell(self, command):
        """Runs a command in bash with the page's carried-over state; returns the
        completed process."""
        script = (
            f"source {shlex.quote(str(self.state / 'env.sh'))}\n"
            f"cd \"$(cat {shlex.quote(str(self.state / 'cwd'))})\"\n"
            "set -e\n"
            f"{command}\n"
            "set +e\n"
            f"export -p > {shlex.quote(str(self.state / 'env.sh'))}\n"
            f"pwd > {shlex.quote(str(self.state / 'cwd'))}\n"
        )
        return subprocess.run(["bash", "-c", script], env=self.runner.env, capture_output=True,
                              text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)

    def check(self, kind, where, what, expected, process):
        """Records one example: it passes when it exited 0 and, if an output is
        expected, printed it."""
        got = strip_trailing_blanks(process.stdout.split("\n"))
        problems = []
        if process.returncode != 0:
            problems.append(f"exit status {process.returncode}")
        if expected is not None and not matches(expected, got):
            problems.append("its output differs")
        if not problems:
            self.runner.passed(kind)
            return True
        report = [f"FAILED {self.rel}:{where}: {kind} example ({', '.join(problems)})",
                  "  " + what.replace("\n", "\n  ")]
        if expected is not None and not matches(expected, got):
            report.append("  expected (-) against what it printed (+):")
            for line in difflib.unified_diff(expected, got, "expected", "got", lineterm="", n=2):
                report.append("    " + line)
        if process.returncode != 0 and expected is None:
            report.append("  standard output:")
            report.extend("    " + line for line in got[-40:])
        if process.stderr.strip():
            report.append("  standard error:")
            report.extend("    " + line for line in process.stderr.rstrip().split("\n")[-40:])
        self.runner.failed(kind, "\n".join(report))
        return False

    def console(self, block):
        for command, expected, number in parse_console(block):
            try:
                process = self.shell(command)
            except subprocess.TimeoutExpired:
                self.runner.failed("console", f"FAILED {self.rel}:{number}: timed out after "
                                   f"{TIMEOUT} s\n  $ {command}")
                return False
            if not self.check("console", number, "$ " + command, expected, process):
                return False  # later commands would depend on this one
        return True

    def program(self, block, follower):
        """A Python, C or Fortran program; its expected output when ```output
        follows."""
        kind = block.lang
        self.programs += 1
        stem = f"example-{self.programs}"
        source = "\n".join(block.lines) + "\n"
        here = self.cwd()
        ranks = block.attribute("mpirun")
        launch = f"mpirun -np {int(ranks)} " if ranks else ""
        if kind == "python":
            (here / f"{stem}.py").write_text(source)
            command = f"{launch}python {stem}.py"
        elif kind == "c":
            (here / f"{stem}.c").write_text(source)
            command = (f"mpicc -O2 -Wall -Wextra -std=c11 -o {stem} {stem}.c "
                       f"$(pkg-config --cflags --libs hetbal) -lm\n{launch}./{stem}")
        else:
            (here / f"{stem}.f90").write_text(source)
            command = (f"mpif90 -O2 -o {stem} {stem}.f90 "
                       f"$(pkg-config --cflags --libs hetbal-fortran)\n{launch}./{stem}")
        expected = None
        if follower is not None and follower.lang == "output":
            expected = strip_trailing_blanks(follower.lines)
        try:
            process = self.shell(command)
        except subprocess.TimeoutExpired:
            self.runner.failed(kind, f"FAILED {self.rel}:{block.line}: timed out")
            return False
        return self.check(kind, block.line, f"the {kind} program of line {block.line}",
                          expected, process)

    def run(self, text):
        commands = []  # every command of the page, for the include check
        includes = []
        ok = True
        blocks = blocks_of(text)
        for block, _ in blocks:
            if block.lang == "console":
                commands.extend(c for c, _, _ in parse_console(block))
        for block, follower in blocks:
            body = [line for line in block.lines if line.strip()]
            only_includes = body and all(INCLUDE.fullmatch(line.strip()) for line in body)
            for line in block.lines:
                for m in INCLUDE.finditer(line):
                    includes.append((block, m.group(2), only_includes))
            if not block.lang:
                ok = self.runner.failed("untagged", f"FAILED {self.rel}:{block.line}: a block "
                                        "without a language (rustdoc would run it as Rust): "
                                        "tag it (```text, ```console, ...)")
                continue
            if block.attribute("file") is not None:
                name = block.attribute("file")
                target = self.cwd() / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("\n".join(block.lines) + "\n")
                self.runner.count("file")
                continue
            if not ok:
                continue
            if block.lang == "console":
                ok = self.console(block)
            elif block.lang in ("python", "c", "fortran") and not only_includes:
                if any(INCLUDE.search(line) for line in block.lines):
                    ok = self.runner.failed(block.lang, f"FAILED {self.rel}:{block.line}: a "
                                            "program mixing {{#include}} and code")
                else:
                    ok = self.program(block, follower)
            elif block.lang == "rust":
                attributes = block.words[1:]
                if "ignore" in attributes and not only_includes:
                    ok = self.runner.failed("rust", f"FAILED {self.rel}:{block.line}: a "
                                            "`rust,ignore` block must only show code from "
                                            "files ({{#include}}), which run elsewhere")
                elif only_includes:
                    if "ignore" not in attributes:
                        ok = self.runner.failed("rust", f"FAILED {self.rel}:{block.line}: "
                                                "{{#include}} in a Rust doctest: tag it "
                                                "`rust,ignore`")
                else:
                    self.runner.count("rust (doctest)")
        inside = {line for b, _ in blocks for line in range(b.line, b.line + len(b.lines) + 2)}
        for number, line in enumerate(text.split("\n"), start=1):
            if number not in inside:
                for m in INCLUDE.finditer(line):
                    includes.append((Block("markdown", [], number), m.group(2), False))
        for block, spec, only in includes:
            ok = self.include(block, spec, only, commands) and ok
        return ok

    def include(self, block, spec, only, commands):
        """Checks an {{#include FILE[:ANCHOR]}}: the file and the anchor exist,
        and the page runs or compiles the file."""
        parts = spec.split(":")
        file = (self.path.parent / parts[0]).resolve()
        where = f"{self.rel}:{block.line}: {{{{#include {spec}}}}}"
        if not file.is_file():
            return self.runner.failed("include", f"FAILED {where}: no such file")
        if len(parts) == 2 and parts[1] and not parts[1].isdigit():
            text = file.read_text()
            anchor = parts[1]
            if not re.search(rf"ANCHOR:\s*{re.escape(anchor)}\b", text) or \
                    not re.search(rf"ANCHOR_END:\s*{re.escape(anchor)}\b", text):
                return self.runner.failed("include", f"FAILED {where}: no anchor `{anchor}` "
                                          f"(ANCHOR: {anchor} ... ANCHOR_END: {anchor})")
        if only and block.lang not in ("markdown", "md", "text"):
            relative = file.relative_to(ROOT).as_posix() if ROOT in file.parents else None
            compiled = relative is not None and re.match(r"crates/[^/]+/src/", relative)
            if not compiled and not any(relative and relative in c for c in commands):
                return self.runner.failed("include", f"FAILED {where}: no command of this page "
                                          f"runs or compiles {relative or file}")
        self.runner.count("include")
        return True


class Runner:
    def __init__(self, args):
        self.keep = args.keep
        self.counts, self.failures, self.failed_pages = {}, [], []
        self.passes = self.fails = 0
        self.scratch = Path(tempfile.mkdtemp(prefix="hetbal-guide-bin-"))
        path = [str(Path(args.bin_dir).resolve())]
        python = Path(args.python)
        if python.exists():
            # `python` runs that interpreter (a venv's, found by its own path).
            wrapper = self.scratch / "python"
            wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(str(python.absolute()))} "$@"\n')
            wrapper.chmod(0o755)
            path.append(str(self.scratch))
        self.env = dict(os.environ)
        self.env["PATH"] = os.pathsep.join(path + [self.env.get("PATH", "")])
        if args.prefix:
            pkgconfig = str(Path(args.prefix).resolve() / "lib" / "pkgconfig")
            self.env["PKG_CONFIG_PATH"] = os.pathsep.join(
                p for p in (pkgconfig, self.env.get("PKG_CONFIG_PATH")) if p)
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        self.env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
        self.env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def passed(self, kind):
        self.count(kind)
        self.passes += 1

    def failed(self, kind, report):
        self.fails += 1
        self.failures.append(report)
        print(report, file=sys.stderr, flush=True)
        return False


def doctest_pages():
    """The markdown files included as doctests by the crates' lib.rs."""
    pages = set()
    for host in DOCTEST_HOSTS:
        if host.exists():
            for m in re.finditer(r'include_str!\("([^"]+\.md)"\)', host.read_text()):
                pages.add((host.parent / m.group(1)).resolve())
    return pages


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--bin-dir", default=os.environ.get("HETBAL_BIN_DIR",
                                                            str(ROOT / "target" / "debug")))
    parser.add_argument("--python", default=os.environ.get("HETBAL_PYTHON",
                                                           str(ROOT / ".venv-test" / "bin" / "python")))
    parser.add_argument("--prefix", default=os.environ.get("HETBAL_PREFIX"))
    parser.add_argument("--keep", action="store_true", help="keep the pages' directories")
    args = parser.parse_args()
    runner = Runner(args)
    for tool in ("hetbal", "hetbal-mpi"):
        if not (Path(args.bin_dir) / tool).exists():
            sys.exit(f"run-examples: no {tool} in {args.bin_dir} (build it, or give --bin-dir)")
    pages = [p.resolve() for p in args.files] or \
        [ROOT / "README.md"] + sorted(GUIDE_SRC.rglob("*.md"))
    if not args.files:
        # Every figure must be drawn again by the run.
        shutil.rmtree(FIGURES, ignore_errors=True)
    FIGURES.mkdir(parents=True, exist_ok=True)
    started = time.time()
    doctests = doctest_pages()
    for path in pages:
        text = path.read_text()
        page = Page(runner, path)
        t0 = time.time()
        try:
            page.run(text)
        finally:
            page.close()
        print(f"  {path.relative_to(ROOT)}: {time.time() - t0:.1f} s", flush=True)
        rel = path.relative_to(ROOT)
        runnable_rust = any(b.lang == "rust" and "ignore" not in b.words[1:]
                            for b, _ in blocks_of(text))
        if runnable_rust and path not in doctests:
            runner.failed("rust", f"FAILED {rel}: has Rust blocks but no crate includes it as "
                          "a doctest (#[cfg(doctest)] #[doc = include_str!(...)])")
        for m in IMAGE.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+://", target):
                continue
            image = (path.parent / target).resolve()
            if FIGURES in image.parents and not (image.exists() and image.stat().st_mtime >= started):
                runner.failed("figure", f"FAILED {rel}: the figure {target} was not drawn by "
                              "this run's commands")
            elif FIGURES not in image.parents and not image.exists():
                runner.failed("figure", f"FAILED {rel}: no image {target}")
            else:
                runner.count("figure")
    kinds = ["console", "python", "c", "fortran", "file", "include", "figure", "rust (doctest)"]
    print("examples by kind: " + ", ".join(f"{k} {runner.counts.get(k, 0)}" for k in kinds))
    print("  (console: commands run; python, c, fortran: programs run; file: files written for"
          " the commands;\n   include: code shown from files, checked; figure: plots drawn by the"
          " commands;\n   rust: blocks that `cargo test --doc` compiles, and runs unless no_run)")
    if runner.failures:
        print(f"\n{len(runner.failures)} failure(s):\n" + "\n\n".join(runner.failures))
    shutil.rmtree(runner.scratch, ignore_errors=True)
    print(f"guide-examples: {runner.passes} passed, {runner.fails} failed")
    sys.exit(1 if runner.fails else 0)


if __name__ == "__main__":
    main()
