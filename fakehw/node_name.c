// SPDX-License-Identifier: Apache-2.0
/* The default node name: the hostname, lowercased, as the kubelet names
 * its node when no override is given. */
#include <ctype.h>
#include <unistd.h>

#include "cli.h"

int default_node_name(char *buf, unsigned long size)
{
    if (gethostname(buf, size) < 0)
        return -1;
    buf[size - 1] = '\0';
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return buf[0] != '\0' ? 0 : -1;
}
