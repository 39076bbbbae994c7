"""What ``pip install ".[local,offline]"`` puts on disk, today vs 0.1.0 (issue 13).

Run from the repository root (it needs network access to the package index, or a warm
pip cache)::

    python benchmarks/install_size.py [--extras local,offline] [--baseline-ref REF]
                                      [--json FILE]

For each version it creates a fresh virtualenv in a temporary folder and installs the
package from source with the extras, as the README says: 0.1.0 needed the CPU torch
wheel first (``torch==2.13.0``), today's default extras need none. Measured: the install's
wall time (pip's downloads come from its cache when warm, for both alike), the
virtualenv's size on disk (``du``), its largest packages, and whether torch,
transformers or sentence-transformers got in. Today's runs first, then the baseline's.

For today's install it also says where the weight comes from: the bytecode pip compiles
at install (``*.pyc``), and, for each of the package's direct requirements, what it
alone brings: the packages only it pulls in (nothing else installed needs them), so the
megabytes that dropping that requirement would save.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import Version, release, today  # noqa: E402

HEAVY = ("torch", "transformers", "sentence-transformers")
INSTALL_TIMEOUT_S = 3600
PACKAGE = "llama-index-video"

# Run by the new virtualenv's interpreter: its own view of what is installed. Prints
# {"pyc_mb": ..., "exclusive_mb": {requirement: [MB, [the packages only it brings]]}}.
_WEIGHT_BY_REQUIREMENT = """
import importlib.metadata as md, json, os, sys
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as canon

dists = {canon(d.metadata["Name"]): d for d in md.distributions()}

def size(dist):
    total = 0
    for file in dist.files or ():
        try:
            total += os.path.getsize(dist.locate_file(file))
        except OSError:
            pass
    return total

def requires(name, extras):
    found = set()
    for line in dists[name].requires or ():
        req = Requirement(line)
        wanted = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras)
        if wanted and canon(req.name) in dists:
            found.add((canon(req.name), tuple(sorted(req.extras)) or ("",)))
    return found

def closure(roots):
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(requires(*node))
    return {name for name, _ in seen}

roots = requires(canon(sys.argv[1]), tuple(sys.argv[2].split(",")) + ("",))
mb = {name: size(dist) / 1e6 for name, dist in dists.items()}
exclusive = {}
for root in sorted(roots):
    alone = closure([root]) - closure(roots - {root})
    exclusive[root[0]] = [round(sum(mb[n] for n in alone)), sorted(alone, key=lambda n: -mb[n])]
pyc = sum(
    os.path.getsize(os.path.join(folder, name))
    for path in sys.path if os.path.isdir(path) and path.endswith("site-packages")
    for folder, _, names in os.walk(path) for name in names if name.endswith(".pyc")
)
print(json.dumps({"pyc_mb": round(pyc / 1e6), "exclusive_mb": exclusive}))
"""


def install(version: Version, extras: str, *, torch_first: bool, folder: Path) -> dict:
    venv = folder / "venv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    if torch_first:
        subprocess.run([*pip, "torch==2.13.0"], check=True, timeout=INSTALL_TIMEOUT_S)
    subprocess.run([*pip, f"{version.source}[{extras}]"], check=True, timeout=INSTALL_TIMEOUT_S)
    seconds = time.perf_counter() - started
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    installed = {p["name"].lower() for p in json.loads(listed)}
    site = next((venv / "lib").glob("python*/site-packages"))
    sizes = subprocess.run(
        ["du", "-sm", *[str(p) for p in site.iterdir()]],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    largest = sorted(
        (
            (int(size), Path(path).name)
            for size, path in (line.split("\t") for line in sizes.splitlines())
        ),
        reverse=True,
    )[:8]
    total = int(
        subprocess.run(
            ["du", "-sm", str(venv)], check=True, capture_output=True, text=True
        ).stdout.split()[0]
    )
    weight = json.loads(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", _WEIGHT_BY_REQUIREMENT, PACKAGE, extras],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout
    )
    return {
        "version": version.name,
        "install_s": round(seconds, 1),
        "venv_mb": total,
        "packages": len(installed),
        "heavy": sorted(set(HEAVY) & installed),
        "largest_mb": largest,
        "pyc_mb": weight["pyc_mb"],
        "exclusive_mb": weight["exclusive_mb"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="local,offline")
    parser.add_argument("--baseline-ref", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = []
    for version, torch_first in ((today(), False), (release(args.baseline_ref), True)):
        with tempfile.TemporaryDirectory(prefix="install-size-") as folder:
            results.append(
                install(version, args.extras, torch_first=torch_first, folder=Path(folder))
            )
            row = results[-1]
            print(
                f"{row['version']:<18} install {row['install_s']:7.1f} s  "
                f"venv {row['venv_mb']:6d} MB  "
                f"{row['packages']:4d} packages  heavy: {', '.join(row['heavy']) or 'none'}",
                flush=True,
            )
            print("   largest: " + ", ".join(f"{name} {mb} MB" for mb, name in row["largest_mb"]))
            print(f"   bytecode compiled at install (*.pyc): {row['pyc_mb']} MB")
            alone = sorted(row["exclusive_mb"].items(), key=lambda item: -item[1][0])
            for requirement, (mb, packages) in alone:
                if mb:
                    print(f"   {requirement} alone brings {mb} MB: {', '.join(packages[:6])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 1 if results[0]["heavy"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
