"""What signatures cost: signing and verifying in process, and `publish` / `install` of an OCI
artifact with and without a signature, as fresh processes, against a real registry.

In process (plugman.core.signatures): loading a key and signing a plugin manifest (~600
bytes), and verifying the bundle over it, medians of many runs. As processes (`.venv/bin/
plugman`, a fresh `PLUGMAN_HOME` for every install): `publish` unsigned and `publish --sign`,
`install oci://…` of the unsigned and of the signed artifact (the signed one also reads the
referrers tag, the signature's manifest and its bundle, and verifies). The registry is the
Debian `docker-registry` (CNCF distribution 2.8) on 127.0.0.1, started here on a free port.

Results go to stdout and ``bench/results/signing-speed.json``.

Usage: ``.venv/bin/python bench/signing_speed.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGMAN = REPO / ".venv" / "bin" / "plugman"
RESULTS = REPO / "bench" / "results" / "signing-speed.json"
CONFIG = """\
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {storage}
http:
  addr: 127.0.0.1:{port}
"""


def _in_process(runs: int) -> dict[str, float]:
    sys.path.insert(0, str(REPO))
    from plugman.core import signatures

    pair = signatures.generate(None)
    manifest = json.dumps({"schemaVersion": 2, "layers": [{"digest": "x" * 71}] * 4}).encode()
    signing, verifying = [], []
    for _ in range(runs):
        started = time.perf_counter()
        key = signatures.load_private(pair.private, None, "bench")
        bundle = signatures.sign(key, manifest)
        signing.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert not isinstance(signatures.verify(bundle, manifest, pair.public), str)
        verifying.append(time.perf_counter() - started)
    python = str(REPO / ".venv" / "bin" / "python")
    floor, imported = [], []
    for _ in range(max(3, runs // 20)):
        floor.append(_timed([python, "-c", "pass"]))
        imported.append(_timed([python, "-c", IMPORT]))
    return {
        "import_cryptography_ms": (statistics.median(imported) - statistics.median(floor)) * 1000,
        "load_key_and_sign_ms": statistics.median(signing) * 1000,
        "verify_ms": statistics.median(verifying) * 1000,
    }


IMPORT = "from cryptography.hazmat.primitives.asymmetric import ec; import cryptography.exceptions"


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def _checks(tmp: Path, host: str, runs: int) -> dict[str, float]:
    """In process: what install adds to read (and verify) an artifact's signatures."""
    from plugman.core.oci import client
    from plugman.core.oci.reference import parse
    from plugman.core.paths import Paths
    from plugman.plugins.supply_chain.signing import signatures_of

    paths = Paths.from_env({"PLUGMAN_HOME": str(tmp / "checks")})
    found = {}
    for kind in ("plain", "signed"):
        ref = parse(f"{host}/t/{kind}:0")
        with client.connect(ref, paths) as registry:
            digest = client.resolve(registry, ref)
        took = []
        for _ in range(runs * 4):
            started = time.perf_counter()
            signatures_of(paths, str(ref), digest)
            took.append(time.perf_counter() - started)
        found[f"read_signatures_{kind}_ms"] = statistics.median(took) * 1000
    return found


def _plugman(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([str(PLUGMAN), *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise SystemExit(f"plugman {' '.join(args)} failed:\n{done.stderr}")
    return took


def _processes(tmp: Path, host: str, runs: int) -> dict[str, float]:
    env = {**os.environ, "PLUGMAN_HOME": str(tmp / "author"), "PLUGMAN_MANAGED_DIR": str(tmp)}
    env.pop("PLUGMAN_SIGNING_PASSWORD", None)
    _plugman(env, "new", "tool", "--with", "skill,command", "--dir", str(tmp / "tool"))
    _plugman(env, "key", "generate", "--output", str(tmp / "key"))
    times: dict[str, list[float]] = {k: [] for k in ("publish", "publish_sign")}
    times |= {"install_unsigned": [], "install_signed": []}
    manifest = tmp / "tool" / ".claude-plugin" / "plugin.json"
    for run in range(runs):  # each run its own version: one signature per manifest
        manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"version": f"1.{run}"}))
        times["publish"].append(
            _plugman(env, "publish", str(tmp / "tool"), f"oci://{host}/t/plain:{run}")
        )
        times["publish_sign"].append(
            _plugman(
                env,
                "publish",
                str(tmp / "tool"),
                f"oci://{host}/t/signed:{run}",
                "--sign",
                str(tmp / "key.key"),
            )
        )
    for run in range(runs):
        for kind, repo in (("install_unsigned", "plain"), ("install_signed", "signed")):
            home = {**env, "PLUGMAN_HOME": str(tmp / f"home-{kind}-{run}")}
            times[kind].append(_plugman(home, "install", f"oci://{host}/t/{repo}:{run}"))
    return {f"{k}_ms": statistics.median(v) * 1000 for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    binary = shutil.which("docker-registry")
    if binary is None:
        raise SystemExit("docker-registry is not installed: run `make setup-apt`")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        (tmp / "config.yml").write_text(CONFIG.format(storage=tmp / "storage", port=port))
        server = subprocess.Popen(
            [binary, "serve", str(tmp / "config.yml")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(500):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.02)
            host = f"127.0.0.1:{port}"
            found = {"runs": runs, **_in_process(runs * 20), **_processes(tmp, host, runs)}
            found |= _checks(tmp, host, runs)
        finally:
            server.terminate()
            server.wait(10)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(found, indent=2) + "\n")
    for key, value in found.items():
        print(f"{key:40} {value:10.2f}" if isinstance(value, float) else f"{key:40} {value}")


if __name__ == "__main__":
    main()
