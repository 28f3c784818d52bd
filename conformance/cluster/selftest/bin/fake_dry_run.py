#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fake kubectl's `create --dry-run=server -o json -f -`: returns the
ResourceClaim or DeviceClass as JSON the way a kube-apiserver with the gates
listed in argv[1] would, dropping the fields of disabled gates and refusing
what validation refuses (adminAccess outside a labelled namespace, a request
left with neither exactly nor firstAvailable)."""
import json
import sys

import yaml


def main():
    with open(sys.argv[1]) as f:
        gates = {line.strip() for line in f if line.strip()}
    obj = yaml.safe_load(sys.stdin)
    name = obj["metadata"]["name"]
    if obj["kind"] == "DeviceClass":
        if "DRAExtendedResource" not in gates:
            obj["spec"].pop("extendedResourceName", None)
        json.dump(obj, sys.stdout)
        return 0
    for i, req in enumerate(obj["spec"]["devices"]["requests"]):
        exactly = req.get("exactly", {})
        if "adminAccess" in exactly:
            if "DRAAdminAccess" in gates:
                sys.stderr.write(
                    f'The ResourceClaim "{name}" is invalid: spec.devices.requests[{i}].exactly.adminAccess: '
                    "Forbidden: admin access to devices requires the "
                    "`resource.kubernetes.io/admin-access: true` label on the containing namespace\n")
                return 1
            del exactly["adminAccess"]
        if "tolerations" in exactly and "DRADeviceTaints" not in gates:
            del exactly["tolerations"]
        if "firstAvailable" in req and "DRAPrioritizedList" not in gates:
            del req["firstAvailable"]
        if "exactly" not in req and "firstAvailable" not in req:
            sys.stderr.write(
                f'The ResourceClaim "{name}" is invalid: spec.devices.requests[{i}]: '
                "Required value: exactly one of `exactly` or `firstAvailable` is required\n")
            return 1
    obj["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    json.dump(obj, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
