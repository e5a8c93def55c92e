"""The frictions a new user met on a clean clone, each fixed: help texts, certs, audit, examples, pre-commit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from limitguard.cli import audit as audit_command
from limitguard.cli import explain as explain_command
from limitguard.cli import main as cli
from tests.support import REPO, node, pod

HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())


def limitguard(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "limitguard", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


# -- help -----------------------------------------------------------------------------------------
def test_top_level_help_is_for_users_not_developers() -> None:
    help_text = cli.build_parser().format_help()
    assert "add_arguments" not in help_text and "its own module" not in help_text
    assert "--version" in help_text and "limitguard COMMAND --help" in help_text
    for name in cli.SUBCOMMANDS:
        assert name in help_text


def subcommand_help(name: str) -> str:
    parser = cli.build_parser(name)
    action = next(a for a in parser._actions if a.dest == "command")
    return " ".join(action.choices[name].format_help().split())  # unwrap the terminal-width lines


def test_serve_help_shows_every_default() -> None:
    text = subcommand_help("serve")
    for shown in (
        "(default: certs)",
        "(default: 0.0.0.0)",
        "(default: 8443)",
        "(default: 4194304)",
        "(default: info)",
        "(default: 0)",
        "(default: 5000)",
    ):
        assert shown in text, shown
    assert "(default: None)" not in text and "(default: False)" not in text


def test_other_commands_show_their_defaults_once() -> None:
    assert "(default: 365)" in subcommand_help("certs")
    assert "(default: 5)" in subcommand_help("audit")
    assert subcommand_help("validate").count("(default: text)") == 1


# -- certs ------------------------------------------------------------------------------------------
def test_certs_message_names_every_file_it_wrote(tmp_path: Path) -> None:
    result = limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "ca.crt, ca.key, tls.crt and tls.key" in result.stdout
    assert {p.name for p in tmp_path.iterdir()} == {"ca.crt", "ca.key", "tls.crt", "tls.key"}


def test_certs_never_silently_replaces_an_existing_ca(tmp_path: Path) -> None:
    assert (
        limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path)).returncode
        == 0
    )
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    again = limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path))
    assert again.returncode == 2
    assert "already holds a CA" in again.stderr and "--reuse-ca" in again.stderr and "--force" in again.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing touched


def test_certs_reuse_ca_signs_a_new_serving_certificate_with_the_same_ca(tmp_path: Path) -> None:
    assert (
        limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path)).returncode
        == 0
    )
    ca_before, tls_before = (tmp_path / "ca.crt").read_bytes(), (tmp_path / "tls.crt").read_bytes()
    result = limitguard(
        "certs", "--service", "other", "--namespace", "lg", "--out", str(tmp_path), "--reuse-ca"
    )
    assert result.returncode == 0, result.stderr
    assert "signed by the existing CA" in result.stdout
    assert (tmp_path / "ca.crt").read_bytes() == ca_before
    serving_bytes = (tmp_path / "tls.crt").read_bytes()
    assert serving_bytes != tls_before
    ca = x509.load_pem_x509_certificate(ca_before)
    serving = x509.load_pem_x509_certificate(serving_bytes)
    serving.verify_directly_issued_by(ca)  # raises when the old CA did not sign it
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "other.lg.svc" in names.get_values_for_type(x509.DNSName)
    assert serving.not_valid_after_utc <= ca.not_valid_after_utc


def test_certs_force_replaces_the_ca(tmp_path: Path) -> None:
    assert (
        limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path)).returncode
        == 0
    )
    ca_before = (tmp_path / "ca.crt").read_bytes()
    result = limitguard(
        "certs", "--service", "limitguard", "--namespace", "lg", "--out", str(tmp_path), "--force"
    )
    assert result.returncode == 0 and "a new CA" in result.stdout
    assert (tmp_path / "ca.crt").read_bytes() != ca_before


def test_certs_reuse_ca_refuses_a_key_of_another_ca(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert (
            limitguard("certs", "--service", "limitguard", "--namespace", "lg", "--out", str(out)).returncode
            == 0
        )
    (first / "ca.key").write_bytes((second / "ca.key").read_bytes())
    result = limitguard(
        "certs", "--service", "limitguard", "--namespace", "lg", "--out", str(first), "--reuse-ca"
    )
    assert result.returncode == 2 and "ca.key does not belong to ca.crt" in result.stderr


@pytest.mark.parametrize(
    ("service", "namespace", "complaint"),
    [
        ("Bad_Name", "lg", "--service 'Bad_Name'"),
        ("1webhook", "lg", "must start with a lowercase letter"),
        ("webhook-", "lg", "--service 'webhook-'"),
        ("a" * 64, "lg", "no more than 63 characters"),
        ("limitguard", "Team_A", "--namespace 'Team_A'"),
    ],
)
def test_certs_rejects_names_kubernetes_would_reject(
    tmp_path: Path, service: str, namespace: str, complaint: str
) -> None:
    result = limitguard(
        "certs", "--service", service, "--namespace", namespace, "--out", str(tmp_path / "out")
    )
    assert result.returncode == 2 and complaint in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


# -- audit ------------------------------------------------------------------------------------------
def write_cluster(path: Path, annotated: bool) -> Path:
    annotations = {"node.koordinator.sh/limit-to-allocatable": '{"cpu": 100}'} if annotated else None
    items = [
        node("n1", cpu="4"),
        node("n2", cpu="4", annotations=annotations),
        pod("p1", node_name="n2", cpu="6"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
    ]
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_audit_without_any_ratio_says_nothing_was_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write_cluster(tmp_path / "cluster.yaml", annotated=False)
    parser = cli.build_parser("audit")
    code = audit_command.run(parser.parse_args(["audit", "--cluster", str(cluster)]))
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("nothing was checked: none of the 2 nodes has a limit-to-allocatable ratio")
    assert "within" not in out and "defaultLimitToAllocatableRatio" in out
    assert audit_command.run(parser.parse_args(["audit", "--cluster", str(cluster), "-o", "json"])) == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert (report["nodesChecked"], report["nodesWithoutRatio"], report["nodesOver"]) == (0, 2, 0)


def test_audit_counts_only_nodes_with_a_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = write_cluster(tmp_path / "cluster.yaml", annotated=True)  # n2: 6 cpu of 4 x 100 %
    code = audit_command.run(cli.build_parser("audit").parse_args(["audit", "--cluster", str(cluster)]))
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == (
        "1 of 1 checked nodes are over their limit-to-allocatable ratio; "
        "1 nodes without a ratio were not checked"
    )


# -- the explain example's configuration ---------------------------------------------------------------
def test_every_config_file_the_docs_pass_exists() -> None:
    mentioned = set()
    for page in (REPO / "docs").glob("**/*"):
        if page.suffix in (".md", ".yaml"):
            text = page.read_text()
            # a file the page has the reader write first (`... > candidate.yaml`) is the reader's own
            written = set(re.findall(r">\s*(\S+\.ya?ml)", text))
            mentioned |= set(re.findall(r"--config\s+(\S+\.ya?ml)", text)) - written
    assert "docs/examples/config-with-extender.yaml" in mentioned
    for path in mentioned - {"/etc/limitguard/config.yaml"}:  # the path inside the container
        assert (REPO / path).is_file(), path


def test_explain_example_runs_with_the_shipped_config(capsys: pytest.CaptureFixture[str]) -> None:
    args = cli.build_parser("explain").parse_args(
        [
            "explain",
            "tests/integration/cli/web.yaml",
            "--cluster",
            "tests/integration/cli/cluster.yaml",
            "--config",
            str(REPO / "docs" / "examples" / "config-with-extender.yaml"),
        ]
    )
    args.pod, args.cluster = str(REPO / args.pod), str(REPO / args.cluster)
    assert explain_command.run(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3] == (
        "  scorers:          LA=LimitAware x2, NRFP=NodeResourcesFitPlus x1, "
        "SRA=ScarceResourceAvoidance x1, PS=PodState x1"
    )
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("node-")}
    assert rows["node-b"][-6:] == ["0", "80", "100", "100", "56", "5"]
    assert rows["node-c"][-6:] == ["100", "80", "0", "0", "56", "5"]


# -- pre-commit --------------------------------------------------------------------------------------
def test_pre_commit_files_pattern_matches_scheduler_configs_only() -> None:
    (hook,) = HOOKS
    pattern = re.compile(hook["files"])  # pre-commit applies it with re.search to repo-relative paths
    for path in (
        "kube-scheduler-config.yaml",
        "deploy/scheduler-config.yml",
        "a/kube-scheduler-configmap.yaml",
        "schedcfg.yaml",
        "env/prod-schedcfg.yaml",
        "scheduler_configuration.yaml",
        "kubescheduler-config.yaml",
    ):
        assert pattern.search(path), path
    for path in (
        "kube-scheduler-deployment.yaml",
        "deploy/kube-scheduler.yaml",
        "scheduler-rbac.yaml",
        "kube-scheduler-config.json",
        "notscheduler-config.yaml",
    ):
        assert not pattern.search(path), path


def test_pre_commit_example_uses_a_hook_and_a_rev_that_exist() -> None:
    page = (REPO / "docs" / "pre-commit.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if "rev:" in b]
    (repo,) = yaml.safe_load(block)["repos"]
    assert [h["id"] for h in repo["hooks"]] == [hook["id"] for hook in HOOKS]
    rev = str(repo["rev"])
    if re.fullmatch(r"v?\d+\.\d+\.\d+", rev):  # a version tag only once the CHANGELOG dates that release
        changelog = (REPO / "CHANGELOG.md").read_text()
        assert re.search(
            rf"^## \[{re.escape(rev.lstrip('v'))}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M
        ), rev
    else:
        assert rev == "main"
    (hook,) = HOOKS
    command, subcommand = hook["entry"].split()
    assert command == "limitguard" and subcommand in cli.SUBCOMMANDS
