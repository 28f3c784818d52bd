// SPDX-License-Identifier: Apache-2.0
/* The REST paths of the objects the plugin reads and writes, built here and
 * nowhere else (resource.k8s.io/v1, core v1).  Names are put in as given:
 * callers pass names that are valid Kubernetes names (DNS labels and
 * subdomains hold no "/", "?" or "%"), as the API server hands them out.
 *
 * The builders write into buf and return 0, or -1 with errno ENAMETOOLONG
 * when the path does not fit size bytes (buf then holds "").  A path of
 * KUBE_PATH_MAX bytes holds any valid names. */
#ifndef FAKEHW_DRIVER_KUBE_PATHS_H
#define FAKEHW_DRIVER_KUBE_PATHS_H

#include <stddef.h>

/* Collections: the list and watch paths, and where slices are POSTed. */
#define KUBE_PATH_RESOURCESLICES "/apis/resource.k8s.io/v1/resourceslices"
#define KUBE_PATH_RESOURCECLAIMS "/apis/resource.k8s.io/v1/resourceclaims" /* all namespaces */

/* Room for a path to an object with a 63-character namespace and a
 * 253-character name, NUL included. */
#define KUBE_PATH_MAX 512

/* /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name> */
int kube_path_resourceclaim(char *buf, size_t size, const char *ns, const char *name);

/* /apis/resource.k8s.io/v1/resourceslices/<name> */
int kube_path_resourceslice(char *buf, size_t size, const char *name);

/* /api/v1/nodes/<name> */
int kube_path_node(char *buf, size_t size, const char *name);

#endif
