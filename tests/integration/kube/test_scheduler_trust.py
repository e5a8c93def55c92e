"""The second scheduler through a year of certificates: the serving certificate renewed, its CA
rotated, the scheduler's client certificate renewed. Two replicas of a model of kube-scheduler's
extender client (tests/integration/kube/schedulermodel.py) call limitguard's real server over TLS
(client certificate required); each runs beside a TrustKeeper on its own copy of the mounted files,
whose leader comes from the scheduler's Lease on the fake apiserver. Time is the keepers' injected
clock. generate mode's renewal, a new CA and certificate at once: test_scheduler_trust_generate.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cryptography.x509.oid import ExtendedKeyUsageOID

from limitguard.certs import generate as certs
from limitguard.http.peers import PeerGate
from limitguard.testing.clientcerts import client_pair
from limitguard.testing.clock import FakeClock
from limitguard.testing.examples import worked_example
from limitguard.testing.server import app_services, serving
from tests.integration.kube.schedulermodel import (
    CLIENT_NAME,
    CONFIG,
    LEADER_DELAY,
    NAMESPACE,
    OVERLAP,
    POLL,
    SERVICE,
    Pod,
    ca_set,
    client_ca,
    project,
    scheduler_pod_on,
)

BOUND = POLL + LEADER_DELAY  # after the pod's files change, per replica


async def test_the_scheduler_follows_renewal_rotation_and_client_renewal(tmp_path: Path, lease_api) -> None:
    clock = FakeClock(start=1000.0)
    # limitguard's serving Secret (CA 1), the CA that will issue the next one (CA 2, not yet out),
    # the scheduler's client CA and certificate.
    first, second = ca_set(tmp_path / "ca1"), ca_set(tmp_path / "ca2")
    serving_dir = tmp_path / "serving"
    shutil.copytree(tmp_path / "ca1", serving_dir)
    clients = tmp_path / "clients"
    client_ca(clients / "ca-old", "scheduler-client-ca-1")
    client_ca(clients / "ca-new", "scheduler-client-ca-2")
    client_ca_file = tmp_path / "client-ca.crt"
    client_ca_file.write_bytes((clients / "ca-old" / "ca.crt").read_bytes())
    usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
    client_pair(clients / "old", "tls", clients / "ca-old", CLIENT_NAME, [], usage)
    client_pair(clients / "new", "tls", clients / "ca-new", CLIENT_NAME, [], usage)

    services = app_services(worked_example(), CONFIG)
    services.peer_gates["extender"] = PeerGate("client authentication", client_ca_file, [CLIENT_NAME])

    async def never(seconds: float) -> None:  # the reloader checks when the test says so
        await clock.sleep(10**9)

    async with serving(services, serving_dir, reload_sleep=never) as served:
        assert served.reloader is not None
        pods: list[Pod] = []
        for name in ("sched-0", "sched-1"):
            root = tmp_path / name
            (root / "limitguard").mkdir(parents=True)
            project(serving_dir, root, "ca.crt")
            shutil.copytree(clients / "old", root / "client")
            files = ("ca.crt", "upcoming-ca.crt")
            pods.append(scheduler_pod_on(tmp_path, name, served.port, clock, lease_api, ca_files=files))
        leader, follower = pods

        async def poll() -> None:
            clock.advance(POLL)
            for pod in pods:
                await pod.keeper.step()

        async def all_work() -> bool:
            return all([await pod.scheduler.filter() for pod in pods])

        assert await all_work()

        # 1. The serving certificate is renewed from the same CA: nothing to restart.
        renewed = certs.issue_with_ca(
            certs.service_hostnames(SERVICE, NAMESPACE), first.ca_cert, first.ca_key, 30
        )
        certs.write(renewed, serving_dir)
        assert served.reloader.check()
        for pod in pods:
            await pod.scheduler.restart()  # even fresh handshakes verify the new leaf with the old trust
            pod.restarted_at.clear()
        for _ in range(40):
            await poll()
        assert [pod.restarted_at for pod in pods] == [[], []] and await all_work()

        # 2a. The next CA is published (the chart mounts it as upcoming-ca.crt) long before it issues
        # anything: each pod's kubelet projects it at its own time; the follower restarts at once,
        # the leader after LEADER_DELAY.
        (tmp_path / "upcoming").mkdir()
        (tmp_path / "upcoming" / "upcoming-ca.crt").write_bytes(second.ca_cert)
        changed_at = {}
        for pod in (follower, leader):
            project(tmp_path / "upcoming", pod.scheduler.pod, "upcoming-ca.crt")
            changed_at[pod.name] = clock.now()
            await poll()
        while not leader.restarted_at:
            await poll()
        for pod in pods:
            (restart_time,) = pod.restarted_at
            assert restart_time - changed_at[pod.name] <= BOUND
        assert follower.restarted_at[0] < leader.restarted_at[0]  # the leader hands over last
        assert await all_work()

        # 2b. limitguard switches to a certificate from CA 2: both trusted, no failed call, no restart.
        shutil.copy(tmp_path / "ca2" / "tls.crt", serving_dir / "tls.crt")
        shutil.copy(tmp_path / "ca2" / "tls.key", serving_dir / "tls.key")
        shutil.copy(tmp_path / "ca2" / "ca.crt", serving_dir / "ca.crt")
        assert served.reloader.check()
        for pod in pods:
            pod.restarted_at.clear()
            await pod.scheduler.restart()  # new handshakes against the new serving certificate
        assert await all_work()
        project(serving_dir, follower.scheduler.pod, "ca.crt")
        await poll()
        project(serving_dir, leader.scheduler.pod, "ca.crt")
        dropped_from = clock.now()
        for pod in pods:
            pod.restarted_at.clear()
        for _ in range(int(OVERLAP / POLL) - 2):
            await poll()
            assert await all_work()
        assert [pod.restarted_at for pod in pods] == [[], []]  # CA 1 still trusted during the overlap
        # 2c. After the overlap CA 1 is dropped: one more restart each, the leader last.
        while not leader.restarted_at:
            await poll()
        assert follower.restarted_at[0] - dropped_from <= OVERLAP + BOUND
        assert leader.restarted_at[0] - follower.restarted_at[0] <= BOUND
        trusted = (leader.scheduler.pod / "trust" / "ca.crt").read_bytes()
        assert trusted == second.ca_cert and await all_work()

        # 3. The client certificate is renewed (a new client CA, both trusted by limitguard for now).
        client_ca_file.write_bytes(
            (clients / "ca-old" / "ca.crt").read_bytes() + (clients / "ca-new" / "ca.crt").read_bytes()
        )
        assert served.reloader.check()
        for pod in pods:
            pod.restarted_at.clear()
            shutil.copy(clients / "new" / "tls.crt", pod.scheduler.pod / "client" / "tls.crt")
            shutil.copy(clients / "new" / "tls.key", pod.scheduler.pod / "client" / "tls.key")
        renewed_at = clock.now()
        await poll()
        assert follower.restarted_at and not leader.restarted_at
        # Without its restart, the leader's kept-alive connection still presents the old certificate:
        # once limitguard stops trusting the old client CA, its calls fail.
        client_ca_file.write_bytes((clients / "ca-new" / "ca.crt").read_bytes())
        assert served.reloader.check()
        assert await follower.scheduler.filter()
        assert not await leader.scheduler.filter()
        while not leader.restarted_at:
            await poll()
        assert leader.restarted_at[0] - renewed_at <= BOUND
        assert await all_work()
        for pod in pods:
            await pod.scheduler.close()
