"""`helm test` check: one AdmissionReview to the webhook Service, verified like the apiserver does.

Standard library only (runs in the limitguard image, and in the chart tests against a local server).
Environment: LIMITGUARD_SERVICE_HOST (DNS name the certificate must carry), LIMITGUARD_PORT,
LIMITGUARD_CA_FILE or LIMITGUARD_CA_PEM, optional LIMITGUARD_CONNECT_HOST (address to dial instead),
optional LIMITGUARD_TIMEOUT_SECONDS (socket timeout, 10 by default; the chart tests raise it so a
loaded test machine is never mistaken for a failing webhook).
"""

import http.client
import json
import os
import socket
import ssl
import sys
import uuid


def main() -> int:
    host = os.environ["LIMITGUARD_SERVICE_HOST"]
    port = int(os.environ.get("LIMITGUARD_PORT", "443"))
    connect_host = os.environ.get("LIMITGUARD_CONNECT_HOST", host)
    timeout = float(os.environ.get("LIMITGUARD_TIMEOUT_SECONDS") or 10)
    context = ssl.create_default_context(
        cafile=os.environ.get("LIMITGUARD_CA_FILE") or None,
        cadata=os.environ.get("LIMITGUARD_CA_PEM") or None,
    )
    uid = str(uuid.uuid4())
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": "limitguard-helm-test",
            "name": "helm-test",
            "dryRun": True,
            "object": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "helm-test", "namespace": "limitguard-helm-test"},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    body = json.dumps(review).encode()
    try:
        sock = socket.create_connection((connect_host, port), timeout=timeout)
        # server_hostname = the Service DNS name: the same hostname check the apiserver makes.
        tls = context.wrap_socket(sock, server_hostname=host)
        connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
        connection.sock = tls
        connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
        reply = connection.getresponse()
        payload = reply.read()
    except (OSError, ssl.SSLError) as error:
        print(f"FAIL: cannot call https://{host}:{port}/validate: {error}")
        return 1
    if reply.status != 200:
        print(f"FAIL: HTTP {reply.status}: {payload[:500]!r}")
        return 1
    answer = json.loads(payload)
    response = answer.get("response") or {}
    problems = []
    if answer.get("apiVersion") != "admission.k8s.io/v1" or answer.get("kind") != "AdmissionReview":
        problems.append(
            f"not an admission.k8s.io/v1 AdmissionReview: {answer.get('apiVersion')}/{answer.get('kind')}"
        )
    if response.get("uid") != uid:
        problems.append(f"response.uid {response.get('uid')!r} does not echo {uid!r}")
    if response.get("allowed") is not True:
        problems.append(f"a pod without limits was not allowed: {response}")
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print(f"OK: https://{host}:{port}/validate answered uid {uid} allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
