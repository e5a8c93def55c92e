"""A list/watch Kubernetes API server for tests and benchmarks (no kube-apiserver can run here).

Reproduced, as kube-apiserver (watch cache + etcd3 storage) behaves for core/v1 nodes, pods,
namespaces and configmaps at the cluster-wide paths `/api/v1/{nodes,pods,namespaces,configmaps}` (and
configmaps at `/api/v1/namespaces/{ns}/configmaps` too):

- resourceVersion: one cluster-wide counter (the etcd revision). Every write bumps it and stamps the
  object's `metadata.resourceVersion`; a list carries the revision of its snapshot in
  `metadata.resourceVersion`; a DELETED event carries the object at the revision of the delete.
- Paginated list: `limit` and `continue`. Every list is a consistent read of the current revision,
  so a `limit=1` list returns the apiserver's current resourceVersion (what client-go's consistent
  reads and limitguard's fence for never-written ledger entries rely on). The first page fixes a snapshot; later pages read that
  same snapshot (a consistent list, whatever changes in between). Items come sorted by key
  (namespace/name) like etcd keys. The continue token is base64 JSON `{"v","rv","start"}` like the
  apiserver's. `remainingItemCount` is set when no selector is used. A continue token whose revision
  has been compacted gets HTTP 410 Gone (Status reason Expired).
- fieldSelector (list and watch): `=`, `==`, `!=`, comma = AND, on metadata.name,
  metadata.namespace, spec.nodeName and status.phase for pods; metadata.name for nodes; metadata.name
  and status.phase for namespaces. An unsupported field label answers 400 BadRequest. With a
  selector a page may hold fewer than `limit` items (even none) yet carry a continue token.
- Watch (`watch=true`/`1`): from resourceVersion N it replays every change after N then streams live
  ones; without N (or "0") it starts with synthetic ADDED events for the current objects. One JSON
  event per line: ADDED, MODIFIED, DELETED, BOOKMARK (only with `allowWatchBookmarks=true`: every
  `bookmark_interval` seconds and before `timeoutSeconds` closes the stream; the object has only
  kind, apiVersion and metadata.resourceVersion), ERROR (a Status object).
- Filtered watch semantics of the watch cache (cache_watcher.go convertToWatchEvent): an object that
  starts matching the selector is sent as ADDED; one that stops matching as DELETED carrying its
  previous content at the new resourceVersion. So a pod reaching Succeeded leaves a
  `status.phase!=Succeeded` watch as DELETED.
- 410 Gone for a too-old resourceVersion: by default as the watch cache does it, an HTTP 200 stream
  with one ERROR event `{"kind":"Status","code":410,"reason":"Expired"}` then end of stream; with
  `watch_gone_as_http=True` as an HTTP 410 answer (older/etcd-direct paths).
- `timeoutSeconds` ends a watch cleanly. Errors are `Status` objects. Bearer token authentication
  with a case-insensitive scheme (in-cluster loaders send `bearer`; 401 otherwise), HTTP or HTTPS.

Faults a test can inject (Python API): `close_watches(abort=False)` ends open streams cleanly,
`abort=True` cuts the connection in the middle of an event; `compact()` forgets history (older
watches and continue tokens get 410); `fail_next(kind, n, status)` answers the next n requests with an
error Status; `send_error(code)` sends an ERROR event to open watches; `gate(kind)` holds list
requests until released; `after_page` is called after each list page is served;
`pause_watch(kind, after_events=N)` lets the watch streams of *kind* write N more events and then
holds them (no events, no bookmarks) until `release()`: a test can stop a burst half-way through
delivery and look at the client in between. `silence_watches(kind)` makes the open streams of
*kind* behave as over a TCP path that drops every packet: nothing more is written, not even the end
of stream at `timeoutSeconds`, until the client closes the connection (new watches are normal);
`silence_next_watch(kind)` does the same to the next watch of *kind* before even its headers go out.
`gate_waiting(kind)` says how many list requests a gate holds; `recover(kind)` drops the failures
still queued by `fail_next`.

Leases (coordination.k8s.io/v1, for leader election) at the namespaced paths
`/apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]`, sharing the one resourceVersion counter:
- GET of one Lease (404 NotFound), list (no pagination) and watch (as above, scoped to the namespace).
- POST creates (409 AlreadyExists when the name is taken; uid, creationTimestamp and resourceVersion
  are stamped). PUT replaces: when the body carries `metadata.resourceVersion` it must equal the
  stored one, else 409 Conflict with the apiserver's "the object has been modified" message
  (compare-and-swap, what client-go's resourcelock relies on); without one the update is
  unconditional (leases allow it). PUT of a missing Lease is 404 (no create-on-update). A body whose
  name differs from the path is 400; `spec.leaseDurationSeconds` <= 0 is 422 Invalid. DELETE removes.
- `fail_next("leases", n, status)` fails lease requests; `lease(ns, name)` reads one for assertions.

ConfigMaps: fieldSelector on metadata.name and metadata.namespace; `apply("configmaps", ...)` writes them.

Events (events.k8s.io/v1) at `/apis/events.k8s.io/v1/namespaces/{ns}/events[/{name}]` (eventroutes.py):
POST validated as the apiserver validates that API (pkg/apis/core/validation/events.go: name,
eventTime, type, reportingController a qualified name, reportingInstance/action/reason <= 128,
note <= 1024, a cluster-scoped object's events only in default or kube-system, series count >= 2;
422 Invalid), 409 AlreadyExists; PATCH as strategic-merge or merge patch (415 otherwise, 404 when
missing, 422 for a changed immutable field); GET lists. `events(ns)` reads them for assertions.

Custom resources (crds.py): `install_crd(manifest)` serves a CRD's versions, `uninstall_crd(group,
plural)` removes it and its objects. `GET /apis/{group}/{version}` is the APIResourceList of the
installed kinds, 404 while none is (how clients find a CRD absent). Create (201; 409), get, replace
(PUT needs metadata.resourceVersion: 422 without, 409 when stale, 404 when missing), delete, list
(a namespace, or all at the group path) with `labelSelector` (=, ==, !=, exists, !exists, in, notin),
`limit` and `continue`. Bodies are validated against the version's openAPIV3Schema (422 Invalid,
every problem) and pruned of undeclared fields before they are stored and answered; metadata.name
must be a DNS subdomain and an owner reference needs apiVersion, kind, name and uid; uid,
creationTimestamp and generation are the server's. `custom_objects(group, plural)` reads them.

Nodes, one at a time, at `/api/v1/nodes/{name}` (limitguard.testing.fakeapi.nodes), sharing the one
resourceVersion counter:
- GET (404 NotFound); a `resourceVersion` parameter (0: from the watch cache) reads the current node.
- PATCH with `application/json-patch+json`, `application/merge-patch+json` or
  `application/strategic-merge-patch+json`, applied as kube-apiserver applies them to a Node
  (limitguard.testing.fakeapi.patches: strategic merge by the Node's merge keys, `spec.taints`
  replaced whole); any other content type, server-side apply included, is 415. A
  `metadata.resourceVersion` in the patched object that differs from the stored one is 409 Conflict
  ("the object has been modified"), as upstream's PatchNodeTaints relies on; labels and taints are
  validated (422 Invalid); `status` never changes. The stored node gets a new resourceVersion and
  node watches see it as MODIFIED. `fail_next("node-writes", n, status)` fails patches;
  `node_patches` records each patch taken.

Secrets and webhook configurations (certroutes.py), what the chart's certificate Jobs use: Secrets at
`/api/v1/namespaces/{ns}/secrets[/{name}]` (GET, POST, DELETE), validated as `ValidateSecret` does
(a DNS-subdomain name, ConfigMap-key data keys, at most 1 MiB, `tls.crt` and `tls.key` in a
`kubernetes.io/tls` Secret: 422 Invalid; a data value that is not base64: 400; 409 AlreadyExists);
mutating and validating webhook configurations (POST, GET, DELETE, PATCH) with patch.go's JSON
patch (400 undecodable, 413 past 10000 operations, 422 when an operation or a `test` fails) and
merge patch (415 for other patch types); a caBundle that is not base64 is refused. `stored(kind, key)`
reads one for assertions.

GET /version answers version.Info (major, minor, gitVersion: `git_version`, default v1.37.0) without
asking for credentials, as the apiserver's system:public-info-viewer binding allows; `version_reads`
counts the requests. Setting `git_version` plays a control-plane upgrade.

Not reproduced: labelSelector on the core kinds, resourceVersion/resourceVersionMatch on lists
(every list is a fresh consistent read), sendInitialEvents (streaming lists), the inconsistent
continue token in a 410, namespaced paths and GET of single objects of the core kinds other than
Nodes, writes over the core API paths other than Node patches and Secrets' (the /_fake/apply control
endpoint writes), server-side apply, the `nodes/status` subresource, admission (webhooks,
ValidatingAdmissionPolicies) and RBAC, validation of a webhook configuration's fields other than
caBundle, watches of custom resources and events, protobuf/table output, gzip, HTTP/2, priority and
fairness (429s only via fail_next), core object validation or defaulting beyond a Node patch's labels
and taints and a Secret's, garbage collection of dependents, graceful deletion (deletes are
immediate), "too large resource version" waits.

Run standalone for benchmarks: `python -m limitguard.testing.fakeapiserver --nodes N --pods M` prints the port,
then control endpoints under /_fake/ drive it: `POST burst?count=N` (N pod MODIFIED events), `GET rv`,
and `POST apply` with `{"kind": "pods", "items": [...]}` (create or replace each, in order: a pod
created, then written again bound, as the apiserver stores a pod and then its binding).
"""

from limitguard.testing.fakeapi.objects import (
    KIND_NAMES,
    LEASE_API_VERSION,
    LEASES,
    LEASES_PREFIX,
    SELECTABLE_FIELDS,
    Change,
    FieldSelector,
    RequestSeen,
    SelectorError,
    Snapshot,
    Stored,
    Watcher,
    WatchPause,
    event_line,
    object_key,
    selectable_fields,
    status_body,
    with_resource_version,
)
from limitguard.testing.fakeapi.server import FakeApiServer

__all__ = [
    "KIND_NAMES",
    "LEASES",
    "LEASES_PREFIX",
    "LEASE_API_VERSION",
    "SELECTABLE_FIELDS",
    "Change",
    "FakeApiServer",
    "FieldSelector",
    "RequestSeen",
    "SelectorError",
    "Snapshot",
    "Stored",
    "WatchPause",
    "Watcher",
    "event_line",
    "object_key",
    "selectable_fields",
    "status_body",
    "with_resource_version",
]
