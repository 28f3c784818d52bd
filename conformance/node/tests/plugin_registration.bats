#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Plugin registration as the kubelet's plugin watcher does it (GetInfo,
# version choice, NotifyRegistrationStatus), and the fake driver's ready file,
# which must wait for both the registration and the published pool.
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite

# ready_file_stays_absent SECONDS: the ready file does not appear for that
# long (the plugin checks its readiness every 200 ms).
ready_file_stays_absent() {
    local deadline=$(($(_ne_now) + $(_ne_usec "$1")))
    while (($(_ne_now) < deadline)); do
        [[ ! -e $READY_FILE ]] || fail "the ready file appeared too early: $(cat "$READY_FILE")"
        sleep 0.05
    done
}

@test "registration: GetInfo names the driver and its DRA socket, and lists the services in order" {
    node_up
    assert_equal "$(registration_value type)" DRAPlugin
    assert_equal "$(registration_value driver)" "$DRIVER"
    assert_equal "$(registration_value version)" v1.DRAPlugin
    assert_equal "$(registration_value notify_status)" OK
    local endpoint versions
    endpoint=$(registration_value endpoint)
    [[ $endpoint == /* && -S $endpoint ]] || fail "endpoint \"$endpoint\" is not an absolute path of a socket"
    versions=$(registration_value supported_versions)
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_equal "$versions" v1.DRAPlugin,v1beta1.DRAPlugin,v1.DRAResourceHealth,v1alpha1.DRAResourceHealth
        assert_equal "$endpoint" "$DRA_SOCK"
        assert_equal "$(registration_value socket)" "$REG_SOCK"
    else
        # v1 first: kubelets 1.34+ pick the first entry they know.
        [[ ,$versions, == ,v1.DRAPlugin,* ]] || fail "supported_versions $versions does not start with v1.DRAPlugin"
    fi
    # The kubelet probes GetInfo again (every 10 s in newer kubelets): same answer.
    local first=$REGISTRATION
    kubelet_register
    assert_equal "$REGISTRATION" "$first"
}

@test "registration: a kubelet that knows none of the plugin's services refuses it; the plugin keeps serving" {
    fakehw_config 4
    fakehw_start
    api_start
    plugin_start
    run -1 ks register --registry-dir "$REG_DIR" --driver "$DRIVER" --timeout 10 --kubelet-services v1alpha4.NodeService
    assert_line registered=false
    assert_line --regexp '^error=none of services supported by the plugin .* are supported by the kubelet'
    plugin_alive
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        wait_pool_published
        ready_file_stays_absent 0.6
        run -0 grep -F "none of services supported by the plugin" "$PLUGIN_LOG"
    fi
    # A kubelet that does know v1 then registers it.
    kubelet_register
    wait_pool_published
    claim_new c1 "$(pool_devices 1)"
    run -0 prepare_claims "$(ref c1)"
}

@test "registration: the ready file waits for the kubelet's registration [fake-driver]" {
    fakehw_config 4
    fakehw_start
    api_start
    plugin_start
    wait_pool_published 4
    # Published, not registered: not ready.
    ready_file_stays_absent 0.6
    kubelet_register
    wait_for 2 "the ready file" test -s "$READY_FILE"
    assert_equal "$(cat "$READY_FILE")" "registered, 4 devices in 1 slices"
    # It goes away with the plugin.
    plugin_stop TERM
    [[ ! -e $READY_FILE ]] || fail "the ready file outlived the plugin"
}

@test "registration: the ready file waits for the pool to be published [fake-driver]" {
    fakehw_config 4
    fakehw_start
    api_start
    # No slice can be created for 2 s.
    standin_fault '{"status": 503, "seconds": 2, "method": "POST", "path": "/apis/resource.k8s.io/v1/resourceslices"}'
    plugin_start
    kubelet_register
    # Registered, not published (yet): not ready while the creates fail.  The
    # file is looked at before the slices, so a ready file seen with no slice
    # after it was there is a real error.
    wait_for 5 "a refused slice create" eval 'standin_requests | grep -q "\"method\":\"POST\".*\"status\":503"'
    local deadline=$(($(_ne_now) + $(_ne_usec 30))) ready n
    while :; do
        ready=false
        [[ ! -e $READY_FILE ]] || ready=true
        n=$(slices length)
        [[ $ready == false || $n != 0 ]] || fail "the ready file appeared with no slice published: $(cat "$READY_FILE")"
        [[ $n == 0 ]] || break
        plugin_alive || fail "the plugin died"
        (($(_ne_now) < deadline)) || fail "no slice was published within 30s"
        sleep 0.05
    done
    wait_pool_published 4
    wait_for 2 "the ready file" test -s "$READY_FILE"
    assert_equal "$(cat "$READY_FILE")" "registered, 4 devices in 1 slices"
}

@test "registration: relative path flags are resolved against the working directory [fake-driver]" {
    fakehw_config 2
    fakehw_start
    api_start
    local here
    here=$(cd "$NODE_ROOT" && pwd -P)
    echo "=== starting with relative paths in $here" >>"$PLUGIN_LOG"
    # shellcheck disable=SC2031 # the subshell's cd is the point
    (cd "$NODE_ROOT" && exec "$NODE_BIN/fakehw-kubelet-plugin" --driver-name "$DRIVER" --node-name "$NODE" \
        --kubeconfig kubeconfig --kubelet-registrar-directory-path kubelet/plugins_registry \
        --kubelet-plugins-directory-path kubelet/plugins --cdi-root cdi --fakehw-root fakehw \
        --fakegpu-smi "$NODE_BIN/fakegpu-smi" --ready-file ready -v 2) </dev/null >>"$PLUGIN_LOG" 2>&1 3>&- &
    # shellcheck disable=SC2034 # node_teardown stops it
    PLUGIN_PID=$!
    kubelet_register
    assert_equal "$(registration_value endpoint)" "$here/kubelet/plugins/$DRIVER/dra.sock"
    wait_pool_published 2
    wait_for 5 "the ready file" test -s "$NODE_ROOT/ready"
    claim_new c1 gpu-0
    run prepare_claims "$(ref c1)"
    assert_success
    # The CDI spec names the tree by its absolute path (the runtime reads it
    # from its own working directory).
    run grep -rhoE 'FAKEHW_ROOT=[^"]*' "$CDI_ROOT"
    assert_output "FAKEHW_ROOT=$here/fakehw"
}
