#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# scripts/side-by-side: the kubelet's DRA gRPC histogram read from /metrics,
# and a whole side-by-side run against a kubectl stand-in whose kubelet
# metrics move as pods come and go.
# shellcheck disable=SC2016 # python snippets

bats_load_library bats-support
bats_load_library bats-assert

setup() {
    REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
    SBS=$REPO/scripts/side-by-side
    T=$BATS_TEST_TMPDIR
}

metrics_text() {
    cat <<'TEXT'
# HELP kubelet_dra_grpc_operations_duration_seconds [ALPHA] Duration in seconds of the DRA gRPC operations
# TYPE kubelet_dra_grpc_operations_duration_seconds histogram
kubelet_dra_grpc_operations_duration_seconds_bucket{driver_name="a.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",le="0.1"} 2
kubelet_dra_grpc_operations_duration_seconds_sum{driver_name="a.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"} 0.004
kubelet_dra_grpc_operations_duration_seconds_count{driver_name="a.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"} 2
kubelet_dra_grpc_operations_duration_seconds_sum{driver_name="a.example.com",grpc_status_code="Unavailable",method_name="/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"} 0.5
kubelet_dra_grpc_operations_duration_seconds_count{driver_name="a.example.com",grpc_status_code="Unavailable",method_name="/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"} 1
kubelet_dra_grpc_operations_duration_seconds_sum{driver_name="b.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"} 0.001
kubelet_dra_grpc_operations_duration_seconds_count{driver_name="b.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"} 1
kubelet_dra_grpc_operations_duration_seconds_count{driver_name="b.example.com",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeGetInfo"} 9
dra_operations_duration_seconds_count{is_error="false",operation_name="PrepareResources"} 3
TEXT
}

@test "side-by-side: the histogram's sum and count per driver and method, every API version and status together" {
    metrics_text >"$T/m.txt"
    run python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import kubelet_dra_metrics as km
m = km.parse(open(sys.argv[2]).read())
for k in sorted(m): print(k[0], k[1], round(m[k][0], 6), m[k][1])
' "$SBS" "$T/m.txt"
    assert_success
    assert_output "a.example.com NodePrepareResources 0.504 3
b.example.com NodeUnprepareResources 0.001 1"
}

@test "side-by-side: a histogram that goes backwards (a kubelet restart) is an error, not a negative time" {
    run python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import kubelet_dra_metrics as km
try:
    km.delta({("a", "NodePrepareResources"): (1.0, 5)}, {("a", "NodePrepareResources"): (0.1, 1)}, "a", "NodePrepareResources")
except km.MetricsError as e:
    print(e)
' "$SBS"
    assert_success
    assert_output --partial "a NodePrepareResources: the histogram went backwards (5 -> 1 calls)"
}

# A kubectl that keeps pods in a directory and serves kubelet metrics in
# which each pod created adds one prepare call of its driver (2 ms for
# driver a.example.com, 4 ms for b.example.com) and each pod deleted one
# unprepare call (1 ms and 3 ms).
fake_kubectl() {
    mkdir -p "$T/bin" "$T/state/pods"
    cat >"$T/bin/kubectl" <<'FAKE'
#!/usr/bin/env python3
import json, os, sys
st = os.environ["FAKE_STATE"]
args = [a for a in sys.argv[1:]]
if args[:1] == ["--kubeconfig"]:
    args = args[2:]
def load():
    p = os.path.join(st, "calls.json")
    return json.load(open(p)) if os.path.exists(p) else {}
def save(c):
    json.dump(c, open(os.path.join(st, "calls.json"), "w"))
def bump(drv, method, ms):
    c = load(); k = drv + " " + method
    s, n = c.get(k, [0.0, 0]); c[k] = [s + ms / 1000.0, n + 1]; save(c)
DRV = {"d0": ("a.example.com", 2, 1), "d1": ("b.example.com", 4, 3)}
if args[0] == "create":
    sys.exit(0)
if args[0] == "apply":
    obj = json.load(sys.stdin)
    for it in obj.get("items", [obj]):
        if it["kind"] == "ResourceClaimTemplate":
            open(os.path.join(st, "templates.log"), "a").write(
                "apply %s %s\n" % (it["metadata"]["name"], it["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]))
        if it["kind"] == "Pod":
            key = it["spec"]["resourceClaims"][0]["resourceClaimTemplateName"][len("sbs-"):]
            open(os.path.join(st, "pods", it["metadata"]["name"]), "w").write(key)
            bump(DRV[key][0], "NodePrepareResources", DRV[key][1])
    sys.exit(0)
if args[:2] == ["delete", "resourceclaimtemplate"]:
    open(os.path.join(st, "templates.log"), "a").write("delete " + args[-1] + "\n")
    sys.exit(0)
if args[0] == "delete":
    for name in args[5:]:
        p = os.path.join(st, "pods", name)
        key = open(p).read(); os.unlink(p)
        bump(DRV[key][0], "NodeUnprepareResources", DRV[key][2])
    sys.exit(0)
if args[:2] == ["get", "--raw"]:
    for k, (s, n) in load().items():
        drv, m = k.split()
        lab = 'driver_name="%s",grpc_status_code="OK",method_name="/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/%s"' % (drv, m)
        print("kubelet_dra_grpc_operations_duration_seconds_sum{%s} %r" % (lab, s))
        print("kubelet_dra_grpc_operations_duration_seconds_count{%s} %d" % (lab, n))
    sys.exit(0)
if args[:2] == ["get", "pods"]:
    names = sorted(os.listdir(os.path.join(st, "pods")))
    if "name" in args:
        print("\n".join("pod/" + n for n in names)); sys.exit(0)
    print(json.dumps({"items": [{"metadata": {"name": n}, "status": {"phase": "Running"}} for n in names]}))
    sys.exit(0)
sys.exit("fake kubectl: unexpected " + " ".join(args))
FAKE
    chmod +x "$T/bin/kubectl"
}

@test "side-by-side: a run against a stand-in kubectl gives each driver's per-call times and the ratio" {
    fake_kubectl
    PATH=$T/bin:$PATH FAKE_STATE=$T/state run python3 "$SBS/side_by_side.py" --node n1 \
        --driver a.example.com=class-a --driver b.example.com=class-b \
        --sequential 4 --batches 2 --batch-size 3 --warmup 1 --out "$T/r.json"
    assert_success
    assert_line "| NodePrepareResources, sequential, median | 2.000 | 4.000 | 0.50 |"
    assert_line "| NodeUnprepareResources, sequential, median | 1.000 | 3.000 | 0.33 |"
    assert_line "| NodePrepareResources, batches of 3, mean per call (median of batches) | 2.000 | 4.000 | 0.50 |"
    run jq -r '.summary_ms["a.example.com"].prepare.n, .summary_ms["b.example.com"].batch_unprepare.n' "$T/r.json"
    assert_output "4
2"
    # Each template is deleted before it is applied: a template's spec is
    # immutable, and one left by an earlier run may name another class.
    run cat "$T/state/templates.log"
    assert_output "delete sbs-d0
apply sbs-d0 class-a
delete sbs-d1
apply sbs-d1 class-b"
}

@test "side-by-side: one driver is refused" {
    run python3 "$SBS/side_by_side.py" --node n1 --driver a.example.com=class-a
    assert_failure
    assert_output --partial "give at least two --driver NAME=CLASS"
}
