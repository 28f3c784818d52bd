#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fake cluster's answer to the preflight's image-check pods: every Pod
created so far (created-*.yaml in the fake cluster directory) with the
image-check label, as a PodList.  Each pod's state comes from the file
image-check-<node> when there is one, else it has run: Succeeded, Pending
(ContainerCreating), Failed (exit 127), or a waiting reason such as
ErrImagePull or ImagePullBackOff.

Usage: fake_image_check.py FAKE_CLUSTER_DIR NAMESPACE"""
import glob
import json
import os
import sys

import yaml

LABEL = "conformance.fakehw.example.com/image-check"


def status(state):
    if state == "Succeeded":
        return {"phase": "Succeeded", "containerStatuses": [
            {"name": "ctr", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}]}
    if state == "Pending":
        return {"phase": "Pending", "containerStatuses": [
            {"name": "ctr", "state": {"waiting": {"reason": "ContainerCreating"}}}]}
    if state == "Failed":
        return {"phase": "Failed", "containerStatuses": [
            {"name": "ctr", "state": {"terminated": {"reason": "StartError", "exitCode": 127,
                                                     "message": 'exec: "sh": executable file not found in $PATH'}}}]}
    return {"phase": "Pending", "containerStatuses": [
        {"name": "ctr", "state": {"waiting": {"reason": state,
                                              "message": "failed to pull and unpack image: dial tcp: lookup registry-1.docker.io: no such host"}}}]}


def main():
    directory, namespace = sys.argv[1], sys.argv[2]
    items = []
    for path in sorted(glob.glob(os.path.join(directory, "created-*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get("kind") != "Pod":
                    continue
                meta = doc.get("metadata", {})
                if meta.get("namespace") != namespace or LABEL not in meta.get("labels", {}):
                    continue
                node = doc["spec"]["nodeName"]
                state_file = os.path.join(directory, "image-check-" + node)
                state = "Succeeded"
                if os.path.exists(state_file):
                    with open(state_file) as f:
                        state = f.read().strip()
                doc["status"] = status(state)
                items.append(doc)
    json.dump({"kind": "PodList", "items": items}, sys.stdout)


if __name__ == "__main__":
    main()
