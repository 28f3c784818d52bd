/* Validation the real API server does and the driver can get wrong: object
 * names, ResourceSlice specs (limits, one-of rules, attribute values, taints)
 * and ResourceClaim status (allocation results, device status entries). */
#ifndef APISERVER_STANDIN_VALIDATE_H
#define APISERVER_STANDIN_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>

#include "resources.h"
#include "status.h"

/* Taint effects accepted (1.35+: None too). */
#define SLICE_MAX_DEVICES                    128
#define SLICE_MAX_DEVICES_WITH_TAINTS        64
#define DEVICE_MAX_ATTRIBUTES_AND_CAPACITIES 32
#define DEVICE_MAX_TAINTS                    16
#define ATTRIBUTE_MAX_STRING                 64

bool is_dns_subdomain(const char *s);
bool is_dns_label(const char *s);

/* Checks metadata.name as a DNS subdomain into fe. */
void validate_name(const char *name, struct field_errors *fe);

/* Validates obj (the object about to be stored) of resource r; old is the
 * stored version on update, NULL on create (immutable fields). */
void validate_object(const struct resource *r, const json_t *obj, const json_t *old,
                     struct field_errors *fe);

#endif
