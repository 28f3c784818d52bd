#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The cluster suite as a Job (manifests/conformance-job, scripts/conformance-job.sh)
# and its image (scripts/conformance-image), with no cluster and no image
# build: the manifests as rendered, the ClusterRole against every kubectl
# call of the suite, and whole runs of the job script against a kubectl
# stand-in (conformance-job-kubectl.bash) whose pod log comes from the
# image's real entrypoint.

# Single-quoted "$..." are literal on purpose: values and calls as written.
# shellcheck disable=SC2016
load helpers

setup() {
    cd "$REPO" || return 1
    local var
    for var in $(compgen -e CONFORMANCE_); do
        unset "$var"
    done
    # CI may itself run in a pod: no in-cluster kubeconfig from the entrypoint.
    unset KUBERNETES_SERVICE_HOST
    export FAKE_JOB_DIR=$BATS_TEST_TMPDIR/fake
    mkdir -p "$FAKE_JOB_DIR" "$BATS_TEST_TMPDIR/bin"
    ln -s "$REPO/manifests/tests/conformance-job-kubectl.bash" "$BATS_TEST_TMPDIR/bin/kubectl"
    PATH=$BATS_TEST_TMPDIR/bin:$PATH
    RBAC_CHECK=$REPO/manifests/tests/check_conformance_rbac.py
}

# check_rendered FILE NAMESPACE IMAGE: the objects the Job needs, tied
# together: one namespace holds the ServiceAccount and the Job, the binding
# gives that account the ClusterRole, the pod runs as that account with the
# image, passes Pod Security "restricted", and its env names are unique.
check_rendered() {
    local py
    py=$(python_for_checks) || return 1
    "$py" - "$@" <<'PY'
import sys, yaml
path, ns, image = sys.argv[1:4]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
by = {}
for d in docs:
    by.setdefault(d["kind"], []).append(d)
errors = []
def want(cond, what):
    if not cond:
        errors.append(what)
for kind in ("Namespace", "ServiceAccount", "Job", "ClusterRole", "ClusterRoleBinding"):
    want(len(by.get(kind, [])) == 1, f"expected one {kind}, found {len(by.get(kind, []))}")
if errors:
    print("\n".join(errors)); sys.exit(1)
nsobj, sa, job = by["Namespace"][0], by["ServiceAccount"][0], by["Job"][0]
role, binding = by["ClusterRole"][0], by["ClusterRoleBinding"][0]
want(nsobj["metadata"]["name"] == ns, f"namespace is {nsobj['metadata']['name']}")
labels = nsobj["metadata"].get("labels", {})
want(labels.get("pod-security.kubernetes.io/enforce") == "restricted", "namespace not Pod Security restricted")
want(labels.get("app.kubernetes.io/part-of") != "fakehw-dra-conformance",
     "the Job's namespace carries the label the suite's cleanup deletes test namespaces by")
want(sa["metadata"]["namespace"] == ns and job["metadata"]["namespace"] == ns, "ServiceAccount or Job in another namespace")
want(role["metadata"]["name"] == ns and binding["metadata"]["name"] == ns, "cluster-scoped names do not follow the namespace")
want(binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ns}, f"roleRef {binding['roleRef']}")
want(binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": ns}], f"subjects {binding['subjects']}")
spec = job["spec"]
want(spec.get("backoffLimit") == 0, "backoffLimit is not 0")
want(isinstance(spec.get("activeDeadlineSeconds"), int), "no activeDeadlineSeconds")
pod = spec["template"]["spec"]
want(pod.get("serviceAccountName") == sa["metadata"]["name"], "pod runs as another ServiceAccount")
want(pod.get("restartPolicy") == "Never", "restartPolicy is not Never")
psc = pod.get("securityContext", {})
want(psc.get("runAsNonRoot") is True and psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
     "pod securityContext not restricted (runAsNonRoot, seccomp RuntimeDefault)")
cs = pod["containers"]
want(len(cs) == 1, "expected one container")
c = cs[0]
want(c["name"] == "conformance", "container is not named conformance (the script reads its log)")
want(c["image"] == image, f"image is {c['image']}")
sc = c.get("securityContext", {})
want(sc.get("allowPrivilegeEscalation") is False and sc.get("capabilities", {}).get("drop") == ["ALL"],
     "container securityContext not restricted (allowPrivilegeEscalation, drop ALL)")
mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
want({"/results", "/tmp"} <= mounts, "no writable /results and /tmp (read-only root filesystem)")
env = c.get("env", [])
names = [e["name"] for e in env]
want(len(names) == len(set(names)), f"env names repeat: {names}")
want(all(isinstance(e.get("value"), str) for e in env), "an env value is not a string")
vals = {e["name"]: e["value"] for e in env}
want(vals.get("CONFORMANCE_RESULTS_TO_LOG") == "true", "CONFORMANCE_RESULTS_TO_LOG is not true")
want(vals.get("CONFORMANCE_REPORT_DIR") == "/results", "CONFORMANCE_REPORT_DIR is not /results")
for k in sorted(vals):
    print(f"env {k}={vals[k]}")
print(f"deadline {spec['activeDeadlineSeconds']}")
if errors:
    print("\n".join(errors)); sys.exit(1)
PY
}

@test "conformance-job: manifests pass yamllint, and so does what the script renders" {
    command -v yamllint >/dev/null || fail "yamllint not installed (make deps)"
    run yamllint --strict -c .yamllint manifests/conformance-job
    assert_success
    scripts/conformance-job.sh render >"$BATS_TEST_TMPDIR/job.yaml"
    run yamllint --strict -c .yamllint "$BATS_TEST_TMPDIR/job.yaml"
    assert_success
}

@test "conformance-job: the default render ties namespace, account, role, binding, Job and image together" {
    scripts/conformance-job.sh render >"$BATS_TEST_TMPDIR/job.yaml"
    run check_rendered "$BATS_TEST_TMPDIR/job.yaml" fakehw-dra-conformance fakehw-dra/conformance:dev
    assert_success
    assert_line "deadline 7200"
    # Only the two the manifest sets: no parameter leaks from this environment.
    run grep -c '^env ' <<<"$output"
    assert_output 2
}

@test "conformance-job: render passes the suite's parameters verbatim and keeps this side's to itself" {
    CONFORMANCE_JOB_NAMESPACE=ci-dra CONFORMANCE_KIT_IMAGE=registry.example.com/conf:v1 CONFORMANCE_JOB_TIMEOUT=900 \
        CONFORMANCE_FILTER='tags:generic,!serial;health' CONFORMANCE_DRIVER=gpu.example.com \
        CONFORMANCE_EXPECTED_ATTRIBUTES='model uuid "x" $HOME \n' CONFORMANCE_JOBS=2 \
        CONFORMANCE_REPORT_DIR=/tmp/here CONFORMANCE_JUNIT=/tmp/j.xml CONFORMANCE_KUBECTL=kubectl \
        CONFORMANCE_KUBE_CONTEXT=kind-x CONFORMANCE_JOB_KEEP=true \
        scripts/conformance-job.sh render >"$BATS_TEST_TMPDIR/job.yaml"
    run check_rendered "$BATS_TEST_TMPDIR/job.yaml" ci-dra registry.example.com/conf:v1
    assert_success
    assert_line 'env CONFORMANCE_FILTER=tags:generic,!serial;health'
    assert_line 'env CONFORMANCE_DRIVER=gpu.example.com'
    assert_line 'env CONFORMANCE_EXPECTED_ATTRIBUTES=model uuid "x" $HOME \n'
    assert_line 'env CONFORMANCE_JOBS=2'
    assert_line 'env CONFORMANCE_REPORT_DIR=/results'
    assert_line 'deadline 900'
    refute_output --partial CONFORMANCE_JUNIT
    refute_output --partial CONFORMANCE_KUBECTL
    refute_output --partial CONFORMANCE_KUBE_CONTEXT
    refute_output --partial CONFORMANCE_JOB_
    refute_output --partial CONFORMANCE_KIT_IMAGE
    # The default name is gone from every name and namespace.
    run grep -nE '(name|namespace): fakehw-dra-conformance$' "$BATS_TEST_TMPDIR/job.yaml"
    assert_failure
}

@test "conformance-job: bad settings are refused, each with its own message" {
    CONFORMANCE_JOB_NAMESPACE=Bad_Name run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "CONFORMANCE_JOB_NAMESPACE=Bad_Name is not a namespace name"
    CONFORMANCE_JOB_TIMEOUT=1h run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "CONFORMANCE_JOB_TIMEOUT=1h is not a positive whole number of seconds"
    CONFORMANCE_JOB_START_TIMEOUT=0 run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "CONFORMANCE_JOB_START_TIMEOUT=0 is not a positive whole number of seconds"
    CONFORMANCE_JOB_KEEP=yes run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "CONFORMANCE_JOB_KEEP=yes: expected true or false"
    CONFORMANCE_KIT_IMAGE='a b' run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "is not an image reference"
    CONFORMANCE_DRIVER=$'two\nlines' run scripts/conformance-job.sh render
    assert_failure
    assert_output --partial "CONFORMANCE_DRIVER holds a newline"
    run scripts/conformance-job.sh bogus
    assert_failure
    assert_output --partial "usage:"
    # Nothing reached the cluster.
    [[ ! -e $FAKE_JOB_DIR/calls ]] || fail "kubectl was called: $(cat "$FAKE_JOB_DIR/calls")"
}

@test "conformance-job RBAC: the ClusterRole grants every request of the suite's kubectl calls, and no other" {
    local py
    py=$(python_for_checks)
    run "$py" "$RBAC_CHECK" --list manifests/conformance-job/rbac.yaml
    assert_success
    # A few requests read from calls that only exist at run time.
    assert_line --regexp '^delete resource.k8s.io/devicetaintrules	.*track_cluster_object'
    assert_line --regexp '^create core/pods/exec	'
    assert_line --regexp '^create resource.k8s.io/resourceclaimtemplates	.*create_from claim-template'
    assert_line --regexp '^get /metrics	'
}

# A copy of the suite to add calls to.
suite_copy() {
    cp -r conformance/cluster "$BATS_TEST_TMPDIR/suite"
    rm -rf "$BATS_TEST_TMPDIR/suite/selftest"
}

@test "conformance-job RBAC: a scenario that needs a new permission fails the check, naming the call" {
    local py
    py=$(python_for_checks)
    suite_copy
    # AT_TEST: a literal test line here would be a test of this file.
    sed 's/^AT_TEST /@test /' >"$BATS_TEST_TMPDIR/suite/99-new.bats" <<'EOF'
#!/usr/bin/env bats
# bats file_tags=new
load lib/helpers
AT_TEST "new: it rolls the driver" {
    kc rollout restart daemonset -n "$CONFORMANCE_DRIVER_NAMESPACE" plugin
    kc patch resourceclaim -n "$ns" c --subresource=status -p '{}'
    kc get daemonsets -n "$CONFORMANCE_DRIVER_NAMESPACE" -o json |
        jq .
    create_from configmap NAME=x
    wait_gone configmap -n "$ns" x
    kc get pods,configmaps -n "$ns" -o json
}
EOF
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: __NAME__\n' >"$BATS_TEST_TMPDIR/suite/templates/configmap.yaml"
    run "$py" "$RBAC_CHECK" --suite "$BATS_TEST_TMPDIR/suite" manifests/conformance-job/rbac.yaml
    assert_failure
    assert_line --partial "99-new.bats:5: kc rollout: a kubectl command check_conformance_rbac.py does not know"
    assert_line --partial "99-new.bats:6: kc patch resourceclaim -n \"\$ns\" c --subresource=status -p '{}': needs patch resource.k8s.io/resourceclaims/status"
    assert_line --partial "99-new.bats:7: kc get daemonsets -n \"\$CONFORMANCE_DRIVER_NAMESPACE\" -o json: needs list apps/daemonsets"
    assert_line --partial "99-new.bats:9: create_from configmap: needs create core/configmaps"
    assert_line --partial "99-new.bats:10: wait_gone configmap -n \"\$ns\" x (kc get in is_gone): needs get core/configmaps"
    # Several types in one call: each is checked.
    assert_line --partial "99-new.bats:11: kc get pods,configmaps -n \"\$ns\" -o json: needs list core/configmaps"
    refute_line --partial "needs list core/pods"
}

@test "conformance-job RBAC: a grant no call needs, and a type known only at run time, are reported" {
    local py
    py=$(python_for_checks)
    sed 's/verbs: \[get, list, create, delete\]$/verbs: [get, list, create, delete, update]/' \
        manifests/conformance-job/rbac.yaml >"$BATS_TEST_TMPDIR/rbac.yaml"
    run "$py" "$RBAC_CHECK" "$BATS_TEST_TMPDIR/rbac.yaml"
    assert_failure
    assert_line --partial "grants update core/pods, which no call of the suite needs"
    suite_copy
    printf '%s\n' 'mystery() {' '    kc delete "$1" "$2"' '}' >>"$BATS_TEST_TMPDIR/suite/lib/kube.bash"
    run "$py" "$RBAC_CHECK" --suite "$BATS_TEST_TMPDIR/suite" manifests/conformance-job/rbac.yaml
    assert_failure
    assert_line --partial 'kc delete "$1": a type known only at run time'
}

# fake_pod_log VERDICT RC: the log of a pod that ran the image's entrypoint
# over a stand-in suite (its run.sh writes the four reports with VERDICT
# and exits RC), as conformance-job.sh reads it back.
fake_pod_log() {
    local suite=$BATS_TEST_TMPDIR/stub-suite
    mkdir -p "$suite"
    cat >"$suite/run.sh" <<'EOF'
#!/usr/bin/env bash
mkdir -p "$CONFORMANCE_REPORT_DIR"
printf '1..1\nok 1 templates: a claim from a template in 1000ms\n' | tee "$CONFORMANCE_REPORT_DIR/cluster.tap"
printf '<testsuites/>\n' >"$CONFORMANCE_REPORT_DIR/cluster-junit.xml"
printf '{"verdict": "%s", "filter": "%s"}\n' "$STUB_VERDICT" "$CONFORMANCE_FILTER" >"$CONFORMANCE_REPORT_DIR/cluster-report.json"
printf 'Verdict: **%s**\n' "$STUB_VERDICT" >"$CONFORMANCE_REPORT_DIR/summary.md"
exit "$STUB_RC"
EOF
    chmod +x "$suite/run.sh"
    STUB_VERDICT=$1 STUB_RC=$2 CONFORMANCE_FILTER=templates CONFORMANCE_KIT_SUITE=$suite \
        CONFORMANCE_REPORT_DIR=$BATS_TEST_TMPDIR/pod-results CONFORMANCE_RESULTS_TO_LOG=true \
        scripts/conformance-image/entrypoint.sh >"$FAKE_JOB_DIR/pod.log" 2>&1 || true
}

# fake_job STATE OUTCOME: the Job's pod in STATE (a containerStatuses state
# object) and the Job's condition OUTCOME (Complete, Failed or none).
fake_job() {
    jq -n --argjson s "$1" '{items: [{metadata: {name: "conformance-x1", creationTimestamp: "2026-01-01T00:00:00Z"},
        status: {containerStatuses: [{state: $s}]}}]}' >"$FAKE_JOB_DIR/pods.json"
    if [[ $2 == none ]]; then
        echo '{"status": {}}' >"$FAKE_JOB_DIR/job.json"
    else
        jq -n --arg t "$2" '{status: {conditions: [{type: $t, status: "True", reason: "BackoffLimitExceeded"}]}}' >"$FAKE_JOB_DIR/job.json"
    fi
}

run_job() {
    CONFORMANCE_REPORT_DIR=$BATS_TEST_TMPDIR/out CONFORMANCE_JOB_START_TIMEOUT=5 run scripts/conformance-job.sh run
}

@test "conformance-job run: a failed verdict comes back with the reports and fails the command" {
    fake_pod_log failed 1
    fake_job '{"terminated": {"exitCode": 1}}' Failed
    mkdir -p "$BATS_TEST_TMPDIR/out" && echo stale >"$BATS_TEST_TMPDIR/out/summary.md"
    run_job
    assert_failure 1
    assert_line "ok 1 templates: a claim from a template in 1000ms"
    assert_line "Verdict: **failed**"
    assert_output --partial "conformance-job: verdict: failed"
    refute_output --partial "results: base64"
    run jq -r '.verdict, .filter' "$BATS_TEST_TMPDIR/out/cluster-report.json"
    assert_output "$(printf '%s\n' failed templates)"
    local f
    for f in cluster.tap cluster-junit.xml summary.md job.log; do
        [[ -s $BATS_TEST_TMPDIR/out/$f ]] || fail "no $f in the report directory"
    done
    # The pod's log without the results block.
    run cat "$BATS_TEST_TMPDIR/out/job.log"
    assert_line "ok 1 templates: a claim from a template in 1000ms"
    refute_output --partial "conformance results"
    # Applied once, then the namespace, role and binding went.
    run cat "$FAKE_JOB_DIR/calls"
    assert_line "apply -f -"
    assert_line "delete namespace fakehw-dra-conformance --ignore-not-found --wait=false"
    assert_line "delete clusterrolebinding fakehw-dra-conformance --ignore-not-found"
    assert_line "delete clusterrole fakehw-dra-conformance --ignore-not-found"
}

@test "conformance-job run: a passed verdict succeeds; KEEP leaves everything; the context reaches kubectl" {
    fake_pod_log passed 0
    fake_job '{"terminated": {"exitCode": 0}}' Complete
    CONFORMANCE_JOB_KEEP=true CONFORMANCE_KUBE_CONTEXT=kind-ci CONFORMANCE_JUNIT=$BATS_TEST_TMPDIR/ci/junit.xml run_job
    assert_success
    assert_line "Verdict: **passed**"
    assert_output --partial "kept namespace fakehw-dra-conformance"
    [[ -s $BATS_TEST_TMPDIR/ci/junit.xml ]] || fail "CONFORMANCE_JUNIT not written"
    run grep -c '^delete namespace' "$FAKE_JOB_DIR/calls"
    assert_output 0
    run grep -vc '^--context kind-ci ' "$FAKE_JOB_DIR/calls"
    assert_output 0
}

@test "conformance-job run: no results in the log is exit 2, with the log kept" {
    printf 'conformance-entrypoint: no suite at /nowhere\n' >"$FAKE_JOB_DIR/pod.log"
    fake_job '{"terminated": {"exitCode": 2}}' Failed
    run_job
    assert_failure 2
    assert_output --partial "no report came back from the Job (Failed BackoffLimitExceeded, pod Terminated 2)"
    run cat "$BATS_TEST_TMPDIR/out/job.log"
    assert_output "conformance-entrypoint: no suite at /nowhere"
}

@test "conformance-job run: an image the nodes cannot get is said at once, with what to do" {
    fake_job '{"waiting": {"reason": "ErrImageNeverPull", "message": "image not present"}}' none
    run_job
    assert_failure 1
    assert_output --partial "cannot get image fakehw-dra/conformance:dev (ErrImageNeverPull: image not present)"
    assert_output --partial "kind load docker-image fakehw-dra/conformance:dev"
}

@test "conformance-job run: a pod that never starts times out with its state" {
    jq -n '{items: [{metadata: {name: "conformance-x1", creationTimestamp: "2026-01-01T00:00:00Z"},
        status: {conditions: [{type: "PodScheduled", status: "False", message: "0/3 nodes are available"}]}}]}' \
        >"$FAKE_JOB_DIR/pods.json"
    CONFORMANCE_REPORT_DIR=$BATS_TEST_TMPDIR/out CONFORMANCE_JOB_START_TIMEOUT=3 run scripts/conformance-job.sh run
    assert_failure 1
    assert_output --partial "the Job's pod did not start within 3s: conformance-x1 Pending 0/3 nodes are available"
}

@test "conformance-job run: a namespace of an earlier run that is still going away is waited for" {
    fake_pod_log passed 0
    fake_job '{"terminated": {"exitCode": 0}}' Complete
    echo Terminating >"$FAKE_JOB_DIR/ns-phase"
    (sleep 3 && rm -f "$FAKE_JOB_DIR/ns-phase") &
    run_job
    assert_success
    assert_output --partial "namespace fakehw-dra-conformance of an earlier run to be deleted"
}

@test "conformance image: the Dockerfile installs what run.sh needs and runs the entrypoint" {
    local df=scripts/conformance-image/Dockerfile
    run grep -E 'apt-get install' -A2 "$df"
    # curl: the suite reads through kubectl proxy's unix socket.
    assert_output --partial "bats bats-support bats-assert bats-file parallel jq curl util-linux"
    run grep -c '^ENTRYPOINT \["/usr/local/bin/conformance-entrypoint"\]$' "$df"
    assert_output 1
    # No registry: the base is one of the images this repository makes.
    run grep '^ARG BASE_IMAGE=' "$df"
    assert_output "ARG BASE_IMAGE=fakehw-dra/kind-rootfs:bookworm"
    # The Job runs the uid the image runs as.
    run grep -c '^USER 10001:10001$' "$df"
    assert_output 1
    run grep -c 'runAsUser: 10001$' manifests/conformance-job/job.yaml
    assert_output 1
    # The kubectl it pins is new enough for the suite.
    run make -s --no-print-directory -f Makefile -f - print-kubectl <<<'print-kubectl: ; @echo $(KUBECTL_VERSION)'
    assert_output --regexp '^v1\.(3[4-9]|[4-9][0-9])\.[0-9]+$'
}

@test "conformance image: the entrypoint runs a command given, and refuses a bad CONFORMANCE_RESULTS_TO_LOG" {
    run scripts/conformance-image/entrypoint.sh echo hello
    assert_success
    assert_output hello
    CONFORMANCE_KIT_SUITE=$BATS_TEST_TMPDIR/none run scripts/conformance-image/entrypoint.sh
    assert_failure 2
    assert_output --partial "no suite at $BATS_TEST_TMPDIR/none"
    mkdir -p "$BATS_TEST_TMPDIR/s" && printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/s/run.sh" && chmod +x "$BATS_TEST_TMPDIR/s/run.sh"
    CONFORMANCE_KIT_SUITE=$BATS_TEST_TMPDIR/s CONFORMANCE_RESULTS_TO_LOG=1 run scripts/conformance-image/entrypoint.sh
    assert_failure 2
    assert_output --partial "CONFORMANCE_RESULTS_TO_LOG=1: expected true or false"
}

@test "conformance image: in a pod without a kubeconfig the entrypoint writes one for the ServiceAccount" {
    local sa=$BATS_TEST_TMPDIR/sa
    mkdir -p "$sa" "$BATS_TEST_TMPDIR/home"
    printf 'TOKEN' >"$sa/token" && printf 'CA' >"$sa/ca.crt" && printf 'ci-dra' >"$sa/namespace"
    # kubectl falls back to the in-cluster config only without flags; the
    # suite's kc passes --request-timeout, so the file is what it uses.
    HOME=$BATS_TEST_TMPDIR/home TMPDIR=$BATS_TEST_TMPDIR KUBERNETES_SERVICE_HOST=fd00::1 KUBERNETES_SERVICE_PORT=6443 \
        CONFORMANCE_KIT_SA_DIR=$sa run scripts/conformance-image/entrypoint.sh bash -c 'echo "KUBECONFIG=$KUBECONFIG"; cat "$KUBECONFIG"'
    assert_success
    assert_line "KUBECONFIG=$BATS_TEST_TMPDIR/in-cluster.kubeconfig"
    assert_line "      server: https://[fd00::1]:6443"
    assert_line "      certificate-authority: $sa/ca.crt"
    assert_line "      tokenFile: $sa/token"
    assert_line "      namespace: ci-dra"
    run python3 -c 'import sys, yaml; c = yaml.safe_load(open(sys.argv[1])); print(c["current-context"])' \
        "$BATS_TEST_TMPDIR/in-cluster.kubeconfig"
    assert_output in-cluster
    # A kubeconfig given (docker run with a mounted one) is left alone.
    HOME=$BATS_TEST_TMPDIR/home TMPDIR=$BATS_TEST_TMPDIR KUBERNETES_SERVICE_HOST=10.0.0.1 KUBECONFIG=/mounted/config \
        CONFORMANCE_KIT_SA_DIR=$sa run scripts/conformance-image/entrypoint.sh bash -c 'echo "KUBECONFIG=$KUBECONFIG"'
    assert_output "KUBECONFIG=/mounted/config"
    # Outside a pod: nothing written.
    rm -f "$BATS_TEST_TMPDIR/in-cluster.kubeconfig"
    HOME=$BATS_TEST_TMPDIR/home TMPDIR=$BATS_TEST_TMPDIR run env -u KUBERNETES_SERVICE_HOST -u KUBECONFIG \
        scripts/conformance-image/entrypoint.sh bash -c 'echo "KUBECONFIG=${KUBECONFIG:-}"'
    assert_output "KUBECONFIG="
}
