// SPDX-License-Identifier: Apache-2.0
/* A unary gRPC call over a unix socket on grpc core, for the PodResources
 * client: its own small client code (the plugin only serves). */
#ifndef FAKEHW_PODRESOURCES_CLIENT_H
#define FAKEHW_PODRESOURCES_CLIENT_H

#include <protobuf-c/protobuf-c.h>

#include "error.h"

/* Calls method ("/v1.PodResourcesLister/List") on the unix socket with req
 * and decodes the answer with answer_desc into *answer (free it with
 * protobuf_c_message_free_unpacked).  -1 with err when the call fails or
 * the answer does not decode: why nothing answers (podresources_reach.h)
 * when the socket cannot be reached, that the kubelet did not answer in
 * time, else the socket, the method and the gRPC status (e.g. "NOT_FOUND:
 * pod x not found in y"); timeout_s bounds the whole call. */
int podres_call(const char *socket_path, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *answer_desc, double timeout_s,
                ProtobufCMessage **answer, struct error *err);

#endif
