"""Placement benchmark: kube-scheduler's default profile, modelled, against a real limitguard.

Does a pod that fits somewhere get there? kube-scheduler ranks nodes by requests, limitguard denies
bindings by limits, and a denied pod comes back after a backoff to a scheduler whose view has not
changed. This bench measures that loop, per way of placing pods:

- ``admission``: limitguard's binding check only;
- ``hints``: the same, plus the limit-room labels limitguard's leader keeps on the nodes and the
  mutating webhook's preferred node-affinity term over them at pod creation (``placementHints``,
  mode Auto; needs a limitguard that has the setting);
- ``hints-avoid``: ``hints`` with ``placementHints.avoidFullNodes`` (the limit-full taint);
- ``extender``: kube-scheduler calls limitguard's extender (filter + prioritize, nodeCacheCapable,
  weight 1) over HTTPS on every attempt, as docs/extender.md configures it.

Processes: the fake apiserver (limitguard.testing.fakeapi) holding the cluster, `limitguard serve`
(``--replicas 2``: two of them, a replica set electing a leader through the fake apiserver's Lease)
in live mode (list/watch, the binding ledger, the leader's node writes through the apiserver's
PATCH, real time), and this driver. A pod is created through ``/mutate`` (the returned JSON patch
applied) and stored; the model schedules it once limitguard's watch has it; the binding goes
through ``/validate`` as a Binding AdmissionReview; an allowed one is stored (the pod with
``spec.nodeName``), a denied one sends the pod to the error backoff. The model's node view follows
a watch of the apiserver's nodes, as kube-scheduler's informer does: labels and taints limitguard
writes, and nodes added, reach its scoring as they reach the apiserver. In the hint modes the nodes
start with the labels (and taint) limitguard's leader would have written by then, so a run measures
the steady state; the leader's first look then finds nothing to write. Nothing is scaled: backoffs
are real seconds, so the ledger's holds, the watch lag and the write rate keep their real
proportions to them.

With two replicas the bindings alternate between them (the apiserver's connections to the Service
spread over its endpoints; a follower forwards each to the leader), and the extender calls all go to
one, ``--extender-via leader|follower``: kube-scheduler's extender client keeps one connection alive
(``pkg/scheduler/extender.go`` makeTransport: a Go ``http.Transport`` through apimachinery's
``SetTransportDefaults``, idle connections kept 90 s), and the Service's proxy chose one endpoint
for it. The test apiserver answers on this machine within a millisecond; a real one takes longer
around the webhook call, and both stretches are windows in which a filter does not yet count a
binding. ``--webhook-ms`` models the first (kube-scheduler's binding call through the apiserver's
admission chain to limitguard's webhook: the binding cycle runs beside the next pod's filter),
``--persist-ms`` the second (from the webhook's answer to the pod bound on every watch: the write to
etcd and the watch cache; a follower's cache learns the binding only then, the leader's ledger at
once).

The model (bench/placement/model.py; scheduler.py and columns.py apply it), formula by formula. Sources are files of
kubernetes/kubernetes read at its newest copy available here (master in 2026, after v1.36; the
v1.37.0 tag itself could not be read), and the default weights from limitguard's own table of
``pkg/scheduler/apis/config/v1/default_plugins.go`` getDefaultPlugins
(webhook/limitguard/schedcfg/tables/plugin_tables.py; the same weights in every copy of that file read here):

- Filter, NodeResourcesFit (``plugins/noderesources/fit.go`` fitsRequest): pod count, then cpu and
  memory requests against allocatable minus the requests already on the node (assumed pods
  included). Nothing else filters here: the scenarios have no NoSchedule taints, selectors or ports.
- NodeResourcesFit score, LeastAllocated (``least_allocated.go``, ``resource_allocation.go``):
  per resource ``(allocatable - requested) x 100 / allocatable`` (0 when over), averaged with
  weights cpu 1, memory 1; requested = the node's non-zero requests + the pod's, a container
  without a cpu (memory) request counting 100m (200Mi), an explicit 0 staying 0 (the values in
  ``pkg/scheduler/util``; the rule is PodRequests' NonMissingContainerRequests in
  kubernetes/component-helpers ``resource/helpers.go``, read at v0.37.0-beta.0).
- NodeResourcesBalancedAllocation (``balanced_allocation.go``): actual requests; balance =
  ``(1 - std) x 100`` of the requested fractions capped at 1 (two resources: std = |f1 - f2| / 2);
  the score is ``50 + (50 + balance with the pod - balance without it) / 2``: the change-of-balance
  formula of kubernetes/kubernetes#135573 (merged early 2026, so in 1.36 and 1.37); a pod that
  requests nothing skips the plugin (PreScore Skip, kubernetes/kubernetes#129138).
- NodeAffinity (``nodeaffinity/node_affinity.go``): the summed weights of the preferred terms a node
  matches, a term of weight 0 or without requirements skipped (PreferredSchedulingTerms in
  component-helpers ``scheduling/corev1/nodeaffinity/nodeaffinity.go``, read at v0.37.0-beta.0),
  then ``helper/normalize_score.go`` DefaultNormalizeScore (x 100 / the highest; all 0
  stays 0). TaintToleration (``tainttoleration/taint_toleration.go``): untolerated
  PreferNoSchedule taints, normalised reversed (none: every node 100).
- Weights 1.37: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, BalancedAllocation 1,
  PodTopologySpread 2 (and InterPodAffinity 2, ImageLocality 1, which score every node alike here:
  no pod affinity, no images in node status). An extender adds ``score x weight x 10``
  (``schedule_one.go`` prioritizeNodes). The highest total wins, ties at random (selectHost,
  seeded); a single feasible node is taken unscored.
- PodTopologySpread (``podtopologyspread/scoring.go``, ``plugin.go`` systemDefaultConstraints):
  the pods have no owner, so the system default constraints select nothing and every node scores
  alike; with ``--workload`` they belong to one ReplicaSet, and on nodes without a zone label only
  the hostname constraint (maxSkew 3) applies: ``round(pods of the workload on the node x
  ln(candidates + 2) + 2)``, normalised to ``100 x (highest + lowest - score) / highest``, so the
  node with the fewest of the workload's pods (a trap node, where none could bind) scores 100.
- The feasible-node cap (``schedule_one.go`` numFeasibleNodesToFind): all nodes below 100, else
  ``max(100, N x max(5, 50 - N/125) / 100)`` (420 of 1,000); the search starts at
  nextStartNodeIndex and advances it by the nodes it processed, so each attempt sees the next slice.
- The binding cycle (``schedule_one.go`` ScheduleOne: ``go func()`` around bindingCycle): the pod
  is assumed on its node and the next scheduling cycle starts while the binding call runs.
- The error backoff (``backend/queue/backoff_queue.go``, ``scheduling_queue.go``): a denied binding
  is an error; the pod waits ``1 s x 2^(consecutive errors - 1)``, at most 10 s, from the failure,
  the expiry truncated to the 1 s ordering window; the queue is flushed at the start of each
  window, so the pod is tried again in the window after its expiry. (The windows come with
  SchedulerPopFromBackoffQ, beta and on since 1.33 in ``pkg/features/kube_features.go``; the early
  pop it adds when activeQ is empty takes from the backoff queue of unschedulable pods only, never
  from the error queue: popBackoff.) activeQ is ordered by
  priority, then by when the pod entered the queue (PrioritySort). Binding runs beside the next
  scheduling cycle, as the binding cycle does; the pod stays assumed on its node until the answer.

Figures per scenario and mode: pods placed; stranded (pending at the end while some node has room
for both its requests and its limits); denied bindings per placed pod; time from creation to the
allowed binding, p50 and p99; in the hint modes the node writes the watch saw (per allowed
binding), those limitguard deferred for its rate limit, any past burst + rate x time, and what was
still queued at the end; in (d) the pods placed on the added nodes and the time from a node's add
to its labels (every added node, waited for up to 10 minutes); with two replicas, the extender
calls the replica kube-scheduler talks to had the leader answer. A run ends when every pod is placed
or ``--settle`` seconds pass without a placement. ``--runs N`` runs each N times (seeds SEED to
SEED + N - 1) and prints the median of each figure with the range of the runs.

    python -m bench.placement                                  # (a) to (d) in every mode; (e) by name
    python -m bench.placement --scenarios a --modes admission,extender --settle 10
    python -m bench.placement --workload --modes hints,hints-avoid   # the pods of one ReplicaSet
    python -m bench.placement --scenarios d --modes hints --max-per-second 20 --burst 40
    python -m bench.placement --scenarios e --modes extender --replicas 2 --extender-via follower \
        --persist-ms 20 --runs 3                               # the burst on a follower, 3 seeds
"""
