// SPDX-License-Identifier: Apache-2.0
/* What the health codec exports for its unit tests only. */
#ifndef FAKEHW_DRIVER_HEALTH_CODEC_TEST_H
#define FAKEHW_DRIVER_HEALTH_CODEC_TEST_H

#include "health_codec.h"

/* Writes msg into out, cleaned to valid UTF-8 and, when longer than
 * HEALTH_MESSAGE_MAX bytes, cut between characters to at most
 * HEALTH_MESSAGE_MAX - 3 bytes followed by "...". */
void health_message_cut(const char *msg, char out[HEALTH_MESSAGE_MAX + 1]);

#endif
